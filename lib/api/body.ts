import 'server-only';
import { ApiError } from '@/lib/errors';
import { JSON_TOO_DEEP_MESSAGE, jsonNestingExceeds } from '@/lib/schemas/json-depth';

/**
 * Reads a request body up to `limit` bytes without trusting Content-Length alone (chunked uploads
 * have none). Past the limit the stream is cancelled and the caller gets a 413.
 */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  const tooLarge = () => new ApiError('payload_too_large', 'Request body too large');
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body: an everyday event, not a server fault to log (nor a log flood to allow).
      throw new ApiError('bad_request', 'The request body could not be read: the client closed the connection');
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

export type ParsedBody = { present: false } | { present: true; value: unknown };

export function parseJsonText(text: string, flavor: 'preview' | 'chat'): ParsedBody {
  if (text.trim() === '') return { present: false };
  if (jsonNestingExceeds(text)) {
    if (flavor === 'chat') throw new ApiError('bad_request', JSON_TOO_DEEP_MESSAGE, { type: 'Bad Request' });
    throw ApiError.validation([{ loc: ['body'], msg: JSON_TOO_DEEP_MESSAGE, type: 'json_invalid' }]);
  }
  try {
    return { present: true, value: JSON.parse(text) };
  } catch (err) {
    if (flavor === 'chat') {
      throw new ApiError('bad_request', `JSON decode error: ${(err as Error).message}`, { type: 'Bad Request' });
    }
    // FastAPI reports the character position of the decode failure in loc.
    const pos = Number(/position (\d+)/.exec((err as Error).message)?.[1] ?? 0);
    throw ApiError.validation([{ loc: ['body', pos], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
}
