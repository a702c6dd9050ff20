import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ApiError } from '@/lib/errors';
import type { GgufMatrixType } from '@/lib/engine/hf/gguf-export';
import type { FromGgufThread, ToGgufThread } from '@/lib/export/protocol';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('checkpoints');

/**
 * GGUF downloads of Hugging Face checkpoints, written on the GGUF thread (lib/export/thread.ts): it plans the
 * file (size and header, or why it cannot be written) and then sends it a part per pull, so this thread only
 * passes parts on at the client's pace. An idle thread is ended shortly after its last download.
 */

const RETIRE_AFTER_MS = 2_000;

type Settle = (message: FromGgufThread) => void;

let worker: Worker | undefined;
/** Per download, who waits for the thread's next message (one request is outstanding at a time). */
const waiting = new Map<number, Settle>();
const open = new Set<number>();
let nextId = 0;
let retireTimer: NodeJS.Timeout | undefined;

function thread(): Worker {
  clearTimeout(retireTimer);
  if (worker) return worker;
  const bundled = path.join(process.cwd(), '.tuneboard', 'gguf-worker.mjs');
  if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: run node scripts/build-worker.mjs`);
  const w = new Worker(bundled);
  w.unref();
  w.on('message', (message: FromGgufThread) => {
    const settle = waiting.get(message.id);
    waiting.delete(message.id);
    settle?.(message);
  });
  const fail = (err: Error) => {
    if (worker === w) worker = undefined;
    for (const [id, settle] of waiting) settle({ type: 'failed', id, message: err.message });
    waiting.clear();
    open.clear();
  };
  w.on('error', (err) => {
    log.error({ err }, 'GGUF export thread failed');
    fail(err);
  });
  w.on('exit', (code) => fail(new Error(`GGUF export thread exited (${code})`)));
  worker = w;
  return w;
}

function retireWhenIdle() {
  if (open.size > 0 || waiting.size > 0) return;
  clearTimeout(retireTimer);
  retireTimer = setTimeout(() => {
    const w = worker;
    if (!w || open.size > 0 || waiting.size > 0) return;
    worker = undefined;
    w.removeAllListeners('exit');
    w.removeAllListeners('error');
    void w.terminate();
  }, RETIRE_AFTER_MS).unref();
}

function ask(w: Worker, message: ToGgufThread): Promise<FromGgufThread> {
  return new Promise((resolve) => {
    waiting.set(message.id, resolve);
    w.postMessage(message);
  });
}

/**
 * The GGUF file of the Hugging Face model in `dir` with `adapter` (a PEFT LoRA) merged. Throws a 400 naming why
 * when the checkpoint cannot be exported (architecture, rope scaling, tokenizer, adapter options).
 */
export async function hfCheckpointGguf(options: {
  dir: string;
  adapter: { config: unknown; weights: Uint8Array } | null;
  matrixType: GgufMatrixType;
  name: string;
}): Promise<{ size: number; stream: ReadableStream<Uint8Array> }> {
  const w = thread();
  const id = ++nextId;
  open.add(id);
  let planned: FromGgufThread;
  try {
    planned = await ask(w, { type: 'begin', id, ...options });
  } catch (err) {
    open.delete(id);
    retireWhenIdle();
    throw err;
  }
  if (planned.type !== 'planned') {
    open.delete(id);
    retireWhenIdle();
    if (planned.type === 'refused') {
      throw ApiError.valueError(
        ['query', 'format'],
        `This checkpoint cannot be exported as GGUF: ${planned.message}`,
        'gguf',
      );
    }
    throw new ApiError('internal', `GGUF export failed: ${planned.type === 'failed' ? planned.message : planned.type}`);
  }
  const finish = () => {
    if (!open.delete(id)) return;
    retireWhenIdle();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!open.has(id)) {
          controller.error(new Error('GGUF export thread stopped'));
          return;
        }
        const next = await ask(w, { type: 'pull', id });
        if (next.type === 'chunk') controller.enqueue(next.bytes);
        else if (next.type === 'end') {
          finish();
          controller.close();
        } else {
          finish();
          const reason = next.type === 'failed' ? next.message : next.type;
          log.error({ reason }, 'GGUF export failed while streaming');
          controller.error(new Error(`GGUF export failed: ${reason}`));
        }
      },
      cancel() {
        if (open.has(id) && worker === w) w.postMessage({ type: 'abort', id } satisfies ToGgufThread);
        finish();
      },
    },
    // One part (about 1 MiB) at a time: the thread computes the next only when the client has taken this one.
    { highWaterMark: 1 },
  );
  return { size: planned.size, stream };
}
