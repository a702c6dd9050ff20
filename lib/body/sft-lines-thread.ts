/**
 * The thread that validates uploaded SFT datasets line by line (bundled to .tuneboard/sft-lines-worker.mjs by
 * scripts/build-worker.mjs; driven by lib/services/sft-lines.ts). JSON.parse of a dataset's lines takes seconds of
 * CPU for a large file, and a single long line was parsed whole: on the request thread that stalled health checks
 * for seconds (issue 42). Here the file's bytes arrive chunk by chunk; only the count, or the bad lines, go
 * back, and each chunk is acknowledged so that the sender holds only a few chunks in flight.
 */
import { parentPort } from 'node:worker_threads';
import { SftDataError } from '@/lib/schemas/sft-data';
import { SftLineReader } from './sft-line-reader';
import { lowerThisThreadPriority } from '@/lib/config/thread-priority';
import type { FromSftLinesThread, ToSftLinesThread } from './sft-lines-protocol';

const port = parentPort!;
lowerThisThreadPriority();
const sessions = new Map<number, { reader: SftLineReader; failure?: FromSftLinesThread }>();

function failure(id: number, err: unknown): FromSftLinesThread {
  if (err instanceof SftDataError)
    return { type: 'bad-line', id, file: err.file, problems: err.problems, total: err.total };
  return { type: 'failed', id, message: String((err as Error)?.stack ?? err) };
}

port.on('message', (message: ToSftLinesThread) => {
  switch (message.type) {
    case 'begin':
      sessions.set(message.id, { reader: new SftLineReader(message.file, message.maxLineBytes, message.limitSetting) });
      return;
    case 'chunk': {
      const s = sessions.get(message.id);
      if (s && !s.failure) {
        try {
          s.reader.push(message.bytes);
        } catch (err) {
          // Answered at once, so that the sender stops reading the file; the rest of its chunks are dropped.
          s.failure = failure(message.id, err);
          port.postMessage(s.failure);
        }
      }
      port.postMessage({ type: 'ack', id: message.id, bytes: message.bytes.byteLength } satisfies FromSftLinesThread);
      return;
    }
    case 'end': {
      const s = sessions.get(message.id);
      sessions.delete(message.id);
      if (!s || s.failure) return;
      try {
        port.postMessage({ type: 'done', id: message.id, count: s.reader.end() } satisfies FromSftLinesThread);
      } catch (err) {
        port.postMessage(failure(message.id, err));
      }
      return;
    }
    case 'abort':
      sessions.delete(message.id);
      return;
  }
});
