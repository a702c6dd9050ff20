import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { EngineEvent } from './engine-events';
import type { PromptPositionLogprobs } from './logprobs';
import { TurnBudget } from '@/lib/event-loop/turn-budget';
import type { FromWorker, ModelSpec, ToWorker, WireSequence } from './wire';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('inference');

/**
 * The server side of inference: worker threads (TUNEBOARD_INFERENCE_THREADS, default one per core, at most 2)
 * each running continuous batching per model, so generation never runs on the request thread and health
 * checks stay responsive. A request goes to the least-busy thread; weights are read by the caller's
 * `loadWeights` only when a thread does not have them cached yet.
 */

interface PoolWorker {
  worker: Worker;
  active: number;
  models: Set<string>;
}

/**
 * A structured output the engine cannot enforce, found by the inference thread before it generated anything; the
 * message is StructuredOutputCompileError's (docs/contract.md §8.2 item 6).
 */
export class StructuredOutputRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StructuredOutputRefusedError';
  }
}

interface Pending {
  worker: PoolWorker;
  sequences: number;
  accept(): void;
  push(events: EngineEvent[]): void;
  done(promptLogprobs: (PromptPositionLogprobs | null)[] | null): void;
  fail(err: Error): void;
}

export interface GenerationHandle {
  /** The engine events of every choice; ending the iteration early aborts the generation. */
  events: AsyncIterable<EngineEvent>;
  /** Resolves when generation ends (with prompt logprobs when asked for). */
  finished: Promise<{ promptLogprobs: (PromptPositionLogprobs | null)[] | null }>;
  /**
   * Resolves once the thread has compiled the request's structured-output constraints (at once without any) and
   * started it; rejects with StructuredOutputRefusedError when one cannot be enforced, or with the thread's failure.
   */
  accepted: Promise<void>;
  abort(): void;
}

function spawnWorker(): Worker {
  // The thread runs a bundle of worker-thread.ts made by scripts/build-worker.mjs (npm run build / dev /
  // the test setup): Next's server bundle has no file a Worker could load.
  const bundled = path.join(process.cwd(), '.tuneboard', 'inference-worker.mjs');
  if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: run node scripts/build-worker.mjs`);
  return new Worker(bundled);
}

export class InferencePool {
  private readonly workers: PoolWorker[] = [];
  private readonly pending = new Map<string, Pending>();
  private readonly weightLoaders = new Map<string, () => Promise<Uint8Array>>();
  private nextId = 0;
  // One budget for all threads: what it bounds is the request thread's work per event-loop turn.
  private readonly inbox = new TurnBudget<{ entry: PoolWorker; message: FromWorker }>(({ entry, message }) =>
    this.onMessage(entry, message),
  );

  constructor(size: number) {
    for (let i = 0; i < size; i++) this.workers.push(this.start());
  }

  private start(): PoolWorker {
    const entry: PoolWorker = { worker: spawnWorker(), active: 0, models: new Set() };
    entry.worker.unref();
    entry.worker.on('message', (message: FromWorker) => this.inbox.push({ entry, message }));
    entry.worker.on('error', (err) => log.error({ err }, 'inference worker error'));
    entry.worker.on('exit', (code) => {
      // Fail what it was running and replace it: one crash must not take serving down.
      for (const [id, p] of this.pending) {
        if (p.worker === entry) {
          this.pending.delete(id);
          p.fail(new Error(`inference worker exited (${code})`));
        }
      }
      const at = this.workers.indexOf(entry);
      if (at >= 0) this.workers[at] = this.start();
    });
    return entry;
  }

  private onMessage(entry: PoolWorker, message: FromWorker) {
    if (message.type === 'ready') return;
    if (message.type === 'need-weights') {
      const loader = this.weightLoaders.get(message.key);
      const reply = (m: ToWorker, transfer: ArrayBuffer[] = []) => entry.worker.postMessage(m, transfer);
      if (!loader)
        return reply({ type: 'weights', key: message.key, bytes: null, error: 'no loader for these weights' });
      loader()
        .then((bytes) => {
          const copy = bytes.slice().buffer as ArrayBuffer;
          entry.models.add(message.key);
          reply({ type: 'weights', key: message.key, bytes: copy }, [copy]);
        })
        .catch((err: unknown) =>
          reply({
            type: 'weights',
            key: message.key,
            bytes: null,
            error: err instanceof Error ? err.message : String(err),
          }),
        );
      return;
    }
    const p = this.pending.get(message.id);
    if (!p) return;
    if (message.type === 'events') p.push(message.events);
    else if (message.type === 'accepted') p.accept();
    else {
      this.pending.delete(message.id);
      p.worker.active -= p.sequences;
      if (message.type === 'done') p.done(message.promptLogprobs);
      else if (message.type === 'refused') p.fail(new StructuredOutputRefusedError(message.message));
      else p.fail(new Error(message.message));
    }
  }

  private pick(modelKey: string): PoolWorker {
    return this.workers.reduce((best, w) => {
      const score = (x: PoolWorker) => x.active * 2 - (x.models.has(modelKey) ? 1 : 0);
      return score(w) < score(best) ? w : best;
    });
  }

  generate(input: {
    model: ModelSpec;
    loadWeights?: () => Promise<Uint8Array>;
    /** A Hugging Face checkpoint's base model files (bundled), which threads fetch under their own key. */
    baseWeights?: { key: string; load: () => Promise<Uint8Array> };
    sequences: WireSequence[];
    promptLogprobs: number | null;
  }): GenerationHandle {
    const id = `g${++this.nextId}`;
    if (input.loadWeights) this.weightLoaders.set(input.model.key, input.loadWeights);
    if (input.baseWeights) this.weightLoaders.set(input.baseWeights.key, input.baseWeights.load);
    const worker = this.pick(input.model.key);
    if (input.model.source.kind === 'random') worker.models.add(input.model.key);
    worker.active += input.sequences.length;

    const queue: EngineEvent[] = [];
    let wake: (() => void) | null = null;
    let ended = false;
    let failure: Error | null = null;
    let resolveFinished!: (v: { promptLogprobs: (PromptPositionLogprobs | null)[] | null }) => void;
    let rejectFinished!: (e: Error) => void;
    const finished = new Promise<{ promptLogprobs: (PromptPositionLogprobs | null)[] | null }>((res, rej) => {
      resolveFinished = res;
      rejectFinished = rej;
    });
    finished.catch(() => undefined);
    let accept!: () => void;
    let refuse!: (e: Error) => void;
    const accepted = new Promise<void>((res, rej) => {
      accept = res;
      refuse = rej;
    });
    accepted.catch(() => undefined);
    const notify = () => {
      wake?.();
      wake = null;
    };
    this.pending.set(id, {
      worker,
      sequences: input.sequences.length,
      accept,
      push: (events) => {
        queue.push(...events);
        notify();
      },
      done: (promptLogprobs) => {
        ended = true;
        resolveFinished({ promptLogprobs });
        notify();
      },
      fail: (err) => {
        ended = true;
        failure = err;
        // A no-op once accepted.
        refuse(err);
        rejectFinished(err);
        notify();
      },
    });
    const abort = () => {
      if (!ended) worker.worker.postMessage({ type: 'abort', id } satisfies ToWorker);
    };
    worker.worker.postMessage({
      type: 'generate',
      id,
      model: input.model,
      sequences: input.sequences,
      promptLogprobs: input.promptLogprobs,
    } satisfies ToWorker);

    const events: AsyncIterable<EngineEvent> = {
      [Symbol.asyncIterator]: () => ({
        async next(): Promise<IteratorResult<EngineEvent>> {
          for (;;) {
            if (queue.length) return { value: queue.shift()!, done: false };
            if (failure) throw failure;
            if (ended) return { value: undefined, done: true };
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<EngineEvent>> {
          abort();
          return { value: undefined, done: true };
        },
      }),
    };
    return { events, finished, accepted, abort };
  }

  async close(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}

const globalForPool = globalThis as unknown as { __tuneboardInferencePool?: InferencePool };

export function inferencePool(): InferencePool {
  const size = config.inferenceThreads;
  return (globalForPool.__tuneboardInferencePool ??= new InferencePool(Math.max(1, size)));
}
