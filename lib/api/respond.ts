import 'server-only';
import { ApiError } from '@/lib/errors';
import { componentLogger } from '@/lib/logger';
import { storageFaultMessage } from '@/lib/storage/faults';
import { fastJsonAnswer, isBodyTimeout } from './fast-path';

const log = componentLogger('api');

/** Preview (training) routes answer FastAPI-style; chat routes answer with vLLM/OpenAI's envelope (docs/contract.md §1.5). */
export type ErrorFlavor = 'preview' | 'chat';

export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return jsonText(JSON.stringify(body), init);
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

/** A JSON answer from text that is already JSON. */
export function jsonText(text: string, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(text, { status: init.status ?? 200, headers: { ...JSON_HEADERS, ...init.headers } });
}

/**
 * A route's JSON answer to `req`. The fast path (lib/api/fast-path.ts) writes a JSON answer's text to the socket
 * itself, so a Request it made gets a Response without a body, the text beside it: a body stream for the text, built
 * and then read back, cost about a fifth of the server's CPU for a request as light as /v1/health?via=api (about
 * 270 µs with it, 200 without). Any other caller (Next.js in `next dev`, tests calling a handler) gets an ordinary
 * Response.
 */
export function jsonAnswer(req: Request, text: string, init: { status?: number } = {}): Response {
  return fastJsonAnswer(req, text, { status: init.status ?? 200, headers: JSON_HEADERS }) ?? jsonText(text, init);
}

const CHAT_TYPES: Record<number, string> = {
  400: 'Bad Request',
  401: 'AuthenticationError',
  402: 'PaymentRequiredError',
  403: 'PermissionDeniedError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  408: 'RequestTimeoutError',
  413: 'Bad Request',
  415: 'Bad Request',
  422: 'Bad Request',
  429: 'RateLimitError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
};

/** The single mapping from thrown errors to HTTP responses. Unknown errors never leak their text. */
export function errorResponse(err: unknown, flavor: ErrorFlavor): Response {
  // A body that stopped arriving (the fast path's deadline), however the handler was reading it (a raw upload
  // streamed to storage sees the stream's own error): the client's delay, a 408, not a fault to log as a 500.
  if (isBodyTimeout(err)) err = new ApiError('request_timeout', err.message);
  if (!(err instanceof ApiError)) {
    // Storage faults are the operator's to fix and the client's to know about: say which, never a bare 500.
    const fault = storageFaultMessage(err);
    if (fault) {
      log.error({ err: (err as Error).message }, fault);
      err = new ApiError('unavailable', fault);
    } else {
      log.error({ err }, 'unhandled error');
      err = new ApiError('internal', 'Internal server error');
    }
  }
  const e = err as ApiError;
  const headers: Record<string, string> = { ...e.headers };
  if (e.status === 401 && flavor === 'preview') headers['www-authenticate'] = 'Bearer';
  if (flavor === 'chat') {
    const status = e.code === 'validation' ? 400 : e.status;
    const message =
      e.code === 'validation' && e.issues?.length
        ? e.issues.map((i) => `${i.msg} (${i.loc.join('.')})`).join('; ')
        : e.message;
    return json(
      { error: { message, type: e.type ?? CHAT_TYPES[status] ?? 'Error', param: e.param ?? null, code: status } },
      { status, headers },
    );
  }
  const detail = e.code === 'validation' && e.issues ? e.issues : e.message;
  return json({ detail }, { status: e.status, headers });
}
