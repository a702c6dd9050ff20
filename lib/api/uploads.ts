import 'server-only';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';
import { unreadable } from './body';

export interface UploadedFile {
  name: string;
  stream: NodeJS.ReadableStream;
}

/**
 * The files of an upload request, streamed one at a time: multipart/form-data (every file part, in order)
 * or a raw body taken as one file named `fallbackName`. Nothing is buffered whole in memory.
 */
export async function* uploadedFiles(req: Request, fallbackName: string): AsyncGenerator<UploadedFile> {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > config.largeBodyLimitBytes) {
    throw new ApiError('payload_too_large', 'Request body too large');
  }
  if (!req.body) throw ApiError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  const source = Readable.fromWeb(req.body as unknown as NodeWebReadableStream<Uint8Array>);
  const contentType = req.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    yield { name: fallbackName, stream: source };
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
  parser.on('file', (_field, stream, info) => push({ name: info.filename ?? _field, stream }));
  parser.on('error', () => push(new ApiError('bad_request', 'Malformed multipart body')));
  parser.on('close', () => push(null));
  // A client that goes away mid-upload is not a server fault: answer (to nobody) without logging it. An upload
  // that stalls past TUNEBOARD_BODY_TIMEOUT_SECONDS on the fast path is a 408 (body.ts).
  source.on('error', (err) => push(unreadable(err)));
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
    source.destroy();
  }
}
