import 'server-only';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';
import { unreadable } from './body';
import { admitLargeBody, type LargeBodySlot } from './large-bodies';

export interface UploadedFile {
  name: string;
  stream: NodeJS.ReadableStream;
}

/**
 * What an upload route allows: its own byte limit (a checkpoint's is TUNEBOARD_MAX_CHECKPOINT_MB, a dataset's
 * TUNEBOARD_MAX_BODY_MB), named in the 413, and whether a body past the small-body limit takes one of the
 * TUNEBOARD_MAX_LARGE_REQUESTS slots (lib/api/large-bodies.ts) for as long as the route works on it.
 */
export interface UploadLimits {
  limitBytes: number;
  /** The setting that sets `limitBytes`, named in the 413 so that the operator knows what to raise. */
  limitSetting: string;
  /** Admit the upload like any other large body (a dataset, which is parsed after it is stored). */
  largeAdmission: boolean;
}

const tooLarge = (limits: UploadLimits) =>
  new ApiError('payload_too_large', `Request body too large: the limit is ${limits.limitSetting}`);

/**
 * Runs `handle` on the files of an upload request (see uploadedFiles), holding a large-request slot, when the upload
 * needs one, until `handle` is done with them: a dataset is parsed after it is stored, and that costs what reading it
 * did. The declared length is checked against the route's own limit before anything is read; a body without one
 * (chunked) is counted as it arrives.
 */
export async function withUploadedFiles<T>(
  req: Request,
  fallbackName: string,
  limits: UploadLimits,
  handle: (files: AsyncGenerator<UploadedFile>) => Promise<T>,
): Promise<T> {
  let slot: LargeBodySlot | undefined;
  const admit = limits.largeAdmission ? () => void (slot ??= admitLargeBody()) : undefined;
  try {
    return await handle(uploadedFiles(req, fallbackName, limits, admit));
  } finally {
    slot?.release();
  }
}

/**
 * The files of an upload request, streamed one at a time: multipart/form-data (every file part, in order)
 * or a raw body taken as one file named `fallbackName`. Nothing is buffered whole in memory.
 */
async function* uploadedFiles(
  req: Request,
  fallbackName: string,
  limits: UploadLimits,
  admit: (() => void) | undefined,
): AsyncGenerator<UploadedFile> {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.limitBytes) throw tooLarge(limits);
  if (admit && Number.isFinite(declared) && declared > config.smallBodyLimitBytes) admit();
  if (!req.body) throw ApiError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  const raw = Readable.fromWeb(req.body as unknown as NodeWebReadableStream<Uint8Array>);
  // The whole body (multipart framing included) is counted as it arrives: a body without a length is held to the
  // same limit and takes its admission slot once it is found to be large.
  let total = 0;
  const threshold = config.smallBodyLimitBytes;
  const source = raw.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        total += chunk.byteLength;
        if (total > limits.limitBytes) return done(tooLarge(limits));
        if (admit && total > threshold) {
          try {
            admit();
          } catch (err) {
            return done(err as Error);
          }
        }
        done(null, chunk);
      },
    }),
  );
  const contentType = req.headers.get('content-type') ?? '';
  const failed: { error?: Error } = {};
  // A client that goes away mid-upload is not a server fault: answer (to nobody) without logging it. An upload that
  // stalls past TUNEBOARD_BODY_TIMEOUT_SECONDS on the fast path is a 408 (lib/api/body.ts's unreadable).
  raw.on('error', (err) => source.destroy(unreadable(err)));
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    // The stream may fail (a limit) before its reader has started on it (the route checks the job's lease first):
    // the reader gets the error when it starts, which must not be an unhandled 'error' event meanwhile.
    source.on('error', () => undefined);
    try {
      yield { name: fallbackName, stream: source };
    } finally {
      raw.destroy();
    }
    return;
  }

  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { 'content-type': contentType }, limits: { files: 8, fields: 16 } });
  } catch {
    throw new ApiError('bad_request', 'Malformed multipart body');
  }
  const queue: (UploadedFile | Error | null)[] = [];
  let wake: (() => void) | undefined;
  const push = (item: UploadedFile | Error | null) => {
    queue.push(item);
    wake?.();
    wake = undefined;
  };
  let current: Readable | undefined;
  parser.on('file', (_field, stream, info) => {
    current = stream;
    push({ name: info.filename ?? _field, stream });
  });
  parser.on('error', () => push(failed.error ?? new ApiError('bad_request', 'Malformed multipart body')));
  parser.on('close', () => push(null));
  // Past the limit, or refused admission, or the client gone: the file being read fails with it, and so does the
  // iteration (a part's stream may not be read at that moment).
  source.on('error', (err) => {
    failed.error = err;
    if (current && !current.readableEnded) current.destroy(err);
    parser.destroy(err);
    push(err);
  });
  source.pipe(parser);
  try {
    for (;;) {
      if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const item = queue.shift()!;
      if (item === null) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  } finally {
    // An early exit (validation error, limit) must not leave the parser waiting on an unread part.
    source.unpipe(parser);
    raw.destroy();
  }
}
