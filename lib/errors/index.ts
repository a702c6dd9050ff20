/** A pydantic/FastAPI-style validation item: the preview routes' 422 contract (docs/contract.md §1.5). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
}

export type ErrorCode =
  | 'validation'
  | 'bad_request'
  | 'unauthenticated'
  | 'payment_required'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

const STATUS: Record<ErrorCode, number> = {
  validation: 422,
  bad_request: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export interface ApiErrorOptions {
  issues?: ValidationIssue[];
  /** Chat envelope only: the offending request field. */
  param?: string | null;
  /** Chat envelope only: vLLM's error class name (`Bad Request`, `BadRequestError`, `NotFoundError`…). */
  type?: string;
  /** Overrides the status implied by the code (chat validation errors are 400, not 422). */
  status?: number;
  headers?: Record<string, string>;
}

/**
 * The one error type services, jobs and inference throw; lib/api/respond.ts is the one place it becomes a
 * response. Each code names the status it is answered with, because the contract defines errors by status
 * (docs/contract.md); the envelope, headers and wording of the answer are lib/api's business.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues?: ValidationIssue[];
  readonly param?: string | null;
  readonly type?: string;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? STATUS[code];
    this.issues = options.issues;
    this.param = options.param;
    this.type = options.type;
    this.headers = options.headers;
  }

  static validation(issues: ValidationIssue[]): ApiError {
    return new ApiError('validation', issues[0]?.msg ?? 'Validation error', { issues });
  }

  /** A semantic check failing on one field: pydantic's `value_error` shape. */
  static valueError(loc: (string | number)[], text: string, input?: unknown): ApiError {
    return ApiError.validation([
      { loc, msg: `Value error, ${text}`, type: 'value_error', ...(input === undefined ? {} : { input }) },
    ]);
  }

  static notFound(message: string): ApiError {
    return new ApiError('not_found', message);
  }
}
