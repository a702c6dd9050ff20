import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import type { FromSftLinesThread, ToSftLinesThread } from '@/lib/body/sft-lines-protocol';
import { SftDataError } from '@/lib/schemas/sft-data';
import { artifactWebStream } from '@/lib/storage';

const log = componentLogger('datasets');

/**
 * Validates a stored JSONL dataset on the dataset thread (lib/body/sft-lines-thread.ts): the request thread only
 * reads the file and passes its chunks on. Parsing every line there stalled health checks for seconds on large
 * uploads (4.6 s with four 156 MB uploads, issue 42). Lines are capped by TUNEBOARD_MAX_DATASET_LINE_MB.
 */

/** Bytes sent to the thread and not yet acknowledged: enough to keep it busy, few enough to hold in memory. */
const IN_FLIGHT_BYTES = 4 * 1024 * 1024;
/** As the body thread: an idle thread keeps its last garbage, so it is ended shortly after its last file. */
const RETIRE_AFTER_MS = 2_000;

interface Session {
  ack(bytes: number): void;
  settle(message: FromSftLinesThread): void;
}

let worker: Worker | undefined;
const sessions = new Map<number, Session>();
let nextId = 0;
let retireTimer: NodeJS.Timeout | undefined;

function thread(): Worker {
  clearTimeout(retireTimer);
  if (worker) return worker;
  const bundled = path.join(process.cwd(), '.tuneboard', 'sft-lines-worker.mjs');
  if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: run node scripts/build-worker.mjs`);
  const w = new Worker(bundled);
  w.unref();
  w.on('message', (message: FromSftLinesThread) => {
    const s = sessions.get(message.id);
    if (!s) return;
    if (message.type === 'ack') s.ack(message.bytes);
    else s.settle(message);
  });
  const fail = (err: Error) => {
    if (worker === w) worker = undefined;
    for (const s of sessions.values()) s.settle({ type: 'failed', id: -1, message: err.message });
  };
  w.on('error', (err) => {
    log.error({ err }, 'dataset thread failed');
    fail(err);
  });
  w.on('exit', (code) => fail(new Error(`dataset thread exited (${code})`)));
  worker = w;
  return w;
}

function retireWhenIdle() {
  if (sessions.size > 0) return;
  clearTimeout(retireTimer);
  retireTimer = setTimeout(() => {
    const w = worker;
    if (!w || sessions.size > 0) return;
    worker = undefined;
    w.removeAllListeners('exit');
    w.removeAllListeners('error');
    void w.terminate();
  }, RETIRE_AFTER_MS).unref();
}

/**
 * The number of examples in the stored JSONL `key` (shown as `file`), every line validated. Throws SftDataError
 * naming every bad line (reading stops at a line past the limit), and an ENOENT error when the file is missing.
 */
export async function validateStoredSftFile(file: string, key: string): Promise<number> {
  const found = await artifactWebStream(key);
  if (!found) throw Object.assign(new Error(`${key} is missing`), { code: 'ENOENT' });
  const reader = found.stream.getReader();
  const w = thread();
  const id = ++nextId;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let outcome: FromSftLinesThread | undefined;
  let resolveDone!: (m: FromSftLinesThread) => void;
  const done = new Promise<FromSftLinesThread>((resolve) => (resolveDone = resolve));
  sessions.set(id, {
    ack(bytes) {
      inFlight -= bytes;
      wake?.();
    },
    settle(message) {
      outcome ??= message;
      resolveDone(message);
      wake?.();
    },
  });
  const send = (message: ToSftLinesThread) => w.postMessage(message);
  try {
    send({
      type: 'begin',
      id,
      file,
      maxLineBytes: config.maxDatasetLineBytes,
      limitSetting: 'TUNEBOARD_MAX_DATASET_LINE_MB',
    });
    for (;;) {
      while (inFlight >= IN_FLIGHT_BYTES && !outcome) await new Promise<void>((resolve) => (wake = resolve));
      if (outcome) break;
      const { done: ended, value } = await reader.read();
      if (ended) {
        send({ type: 'end', id });
        break;
      }
      inFlight += value.byteLength;
      // Copied (structured clone): a chunk may share its buffer with others; copying costs far less than parsing.
      send({ type: 'chunk', id, bytes: value });
    }
    const result = await done;
    if (result.type === 'done') return result.count;
    if (result.type === 'bad-line') {
      const [first] = result.problems;
      throw new SftDataError(result.file, first.line, first.reason, result.problems, result.total);
    }
    if (result.type === 'failed') throw new Error(`dataset thread: ${result.message}`);
    throw new Error('unreachable: an ack settles nothing');
  } finally {
    sessions.delete(id);
    if (worker === w) send({ type: 'abort', id });
    await reader.cancel().catch(() => undefined);
    retireWhenIdle();
  }
}
