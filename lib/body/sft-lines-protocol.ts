import type { SftLineProblem } from '@/lib/schemas/sft-data';

/** Messages between the request thread (lib/services/sft-lines.ts) and the dataset thread (sft-lines-thread.ts). */
export type ToSftLinesThread =
  | { type: 'begin'; id: number; file: string; maxLineBytes: number; limitSetting: string }
  | { type: 'chunk'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'abort'; id: number };

export type FromSftLinesThread =
  | { type: 'ack'; id: number; bytes: number }
  | { type: 'done'; id: number; count: number }
  /** The bad lines (an SftDataError as data: errors lose their class crossing threads). */
  | { type: 'bad-line'; id: number; file: string; problems: SftLineProblem[]; total: number }
  | { type: 'failed'; id: number; message: string };
