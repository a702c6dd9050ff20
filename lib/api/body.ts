import 'server-only';
import { ApiError } from '@/lib/errors';
import { JSON_TOO_DEEP_MESSAGE, jsonNestingExceeds } from '@/lib/schemas/json-depth';

/**
 * Reads a request body up to `limit` bytes without trusting Content-Length alone (chunked uploads
 * have none). Past the limit the stream is cancelled and the caller gets a 413.
 */
export async function readBodyText(
  req: Request,
  limit: number,
  large?: { threshold: number; admit: () => void },
): Promise<string> {
  const tooLarge = () => new ApiError('payload_too_large', 'Request body too large');
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  // A body known (or found, while reading) to be large must be admitted before it is held in memory.
  let admitted = false;
  const admit = () => {
    if (!admitted && large) {
      admitted = true;
      large.admit();
    }
  };
  if (large && Number.isFinite(declared) && declared > large.threshold) admit();
  if (!req.body) return '';
  const reader = req.body.getReader();
  // Decoded as it arrives, so that the raw chunks are released as they go instead of being held next to
  // a concatenated copy and the final string.
  const decoder = new TextDecoder();
  const parts: string[] = [];
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
    if (large && total > large.threshold) {
      try {
        admit();
      } catch (err) {
        await reader.cancel().catch(() => undefined);
        throw err;
      }
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
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
