import 'server-only';
import { ApiError } from '@/lib/errors';
import type { BodySink } from './body-offload';
import { isBodyTimeout, prereadBodyOf } from './fast-path';

export interface LargeAdmission {
  threshold: number;
  admit: () => void;
}

/**
 * Reads a request body up to `limit` bytes without trusting Content-Length alone (chunked uploads
 * have none). Past the limit the stream is cancelled and the caller gets a 413.
 */
export async function readBodyText(req: Request, limit: number, large?: LargeAdmission): Promise<string> {
  const read = await readBody(req, limit, large);
  // Without a spill option nothing is spilled.
  if (read.text === undefined) throw new Error('readBody spilled without a sink');
  return read.text;
}

/**
 * Like readBodyText, but a body past `spill.threshold` bytes is streamed into the sink `spill.open()` makes
 * (the body thread, lib/api/body-offload.ts) as it arrives, and the sink's result is returned instead of text.
 */
export async function readBodyOrSpill<T>(
  req: Request,
  limit: number,
  large: LargeAdmission | undefined,
  spill: { threshold: number; open: () => BodySink<T> },
): Promise<{ text: string } | { spilled: T }> {
  return readBody(req, limit, large, spill);
}

/**
 * What a failed read of the body answers: 408 when it did not arrive within `TUNEBOARD_BODY_TIMEOUT_SECONDS` (the
 * fast path's reads, lib/api/fast-path.ts), else the client went away mid-body, an everyday event, not a server
 * fault to log (nor a log flood to allow).
 */
export function unreadable(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isBodyTimeout(err)) return new ApiError('request_timeout', err.message);
  return new ApiError('bad_request', 'The request body could not be read: the client closed the connection');
}

/**
 * The checks every body read starts with: the declared length against the limit, large-body admission (a body
 * known, or found while reading, to be large is admitted before it is held in memory), and a small body the fast
 * path reads whole (it declared its length), read here and checked the same way.
 */
async function startReading(req: Request, limit: number, large?: LargeAdmission) {
  const tooLarge = () => new ApiError('payload_too_large', 'Request body too large');
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  let admitted = false;
  const admit = () => {
    if (!admitted && large) {
      admitted = true;
      large.admit();
    }
  };
  if (large && Number.isFinite(declared) && declared > large.threshold) admit();
  const read = prereadBodyOf(req);
  let preread: Uint8Array | undefined;
  if (read) {
    try {
      preread = await read();
    } catch (err) {
      throw unreadable(err);
    }
    if (preread.byteLength > limit) throw tooLarge();
    if (large && preread.byteLength > large.threshold) admit();
  }
  return { tooLarge, admit, preread };
}

/** A body's chunks as they arrive, with the running total checked against the limit and large-body admission. */
async function* checkedChunks(
  body: ReadableStream<Uint8Array>,
  limit: number,
  large: LargeAdmission | undefined,
  tooLarge: () => ApiError,
  admit: () => void,
): AsyncGenerator<{ value: Uint8Array; total: number }> {
  const reader = body.getReader();
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (err) {
      throw unreadable(err);
    }
    if (chunk.done) return;
    total += chunk.value.byteLength;
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
    yield { value: chunk.value, total };
  }
}

async function readBody<T>(
  req: Request,
  limit: number,
  large?: LargeAdmission,
  spill?: { threshold: number; open: () => BodySink<T> },
): Promise<{ text: string; spilled?: undefined } | { spilled: T; text?: undefined }> {
  const { tooLarge, admit, preread } = await startReading(req, limit, large);
  if (preread) return { text: new TextDecoder().decode(preread) };
  if (!req.body) return { text: '' };
  // Decoded as it arrives, so that the raw chunks are released as they go instead of being held next to
  // a concatenated copy and the final string. A body that may spill keeps its first bytes raw until it
  // either ends (then they are decoded) or passes the threshold (then they go to the sink).
  const decoder = new TextDecoder();
  const parts: string[] = [];
  const held: Uint8Array[] = [];
  let sink: BodySink<T> | undefined;
  try {
    for await (const { value, total } of checkedChunks(req.body, limit, large, tooLarge, admit)) {
      if (sink) sink.write(value);
      else if (!spill) parts.push(decoder.decode(value, { stream: true }));
      else if (total <= spill.threshold) held.push(value);
      else {
        sink = spill.open();
        for (const bytes of held) sink.write(bytes);
        held.length = 0;
        sink.write(value);
      }
    }
  } catch (err) {
    sink?.abort();
    throw err;
  }
  if (sink) return { spilled: await sink.end() };
  for (const bytes of held) parts.push(decoder.decode(bytes, { stream: true }));
  parts.push(decoder.decode());
  return { text: parts.join('') };
}

/**
 * A request body as bytes (the Tinker SDK's protobuf, possibly zstd-compressed, docs/tinker.md §2.1), with the same
 * limit and large-body admission as readBodyText.
 */
export async function readBodyBytes(req: Request, limit: number, large?: LargeAdmission): Promise<Uint8Array> {
  const { tooLarge, admit, preread } = await startReading(req, limit, large);
  if (preread) return preread;
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  for await (const { value } of checkedChunks(req.body, limit, large, tooLarge, admit)) chunks.push(value);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
