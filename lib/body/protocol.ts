import type { ErrorCode, ValidationIssue } from '@/lib/errors';
import type { BodyFlavor } from './parse';
import type { BodyKind, Prepared } from './prepared';

/** Messages between the request thread (lib/api/body-offload.ts) and the body thread (thread.ts). */
export type ToBodyThread =
  | { type: 'begin'; id: number; kind: BodyKind; flavor: BodyFlavor }
  | { type: 'chunk'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'abort'; id: number };

/** An ApiError as plain data (errors lose their class crossing threads). */
export interface SerializedApiError {
  code: ErrorCode;
  message: string;
  issues?: ValidationIssue[];
  status?: number;
  type?: string;
  param?: string | null;
}

export type FromBodyThread =
  | { type: 'prepared'; id: number; value: Prepared<BodyKind> }
  | { type: 'failed'; id: number; error: SerializedApiError };
