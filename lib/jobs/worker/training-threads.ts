import { parentPort, Worker, workerData } from 'node:worker_threads';
import { Model, parseModelConfig, type ModelConfig } from '@/lib/engine/model';
import { SftShardWorker, type SftGradientHelper, type SftShard } from '@/lib/engine/train/sft';
import { config } from '@/lib/config';

/**
 * Data-parallel SFT across two threads of one worker process: the handler's thread computes half of each
 * batch while a helper thread (its own WebAssembly heap and model copy) computes the other half; gradients
 * are summed before the optimizer step (lib/engine/train/sft.ts). The engine stays single-threaded and pure;
 * threads live here.
 *
 * A helper thread loads the worker's own script (lib/jobs/worker/worker-main.ts under tsx, or the bundled
 * .tuneboard/worker.mjs), which recognises the role in workerData; so no extra bundle entry is needed.
 * Only processes that call `enableTrainingThreads` (the worker) use threads; tests run single-threaded.
 */

const ROLE = 'tuneboard-sft-helper';

let entry: string | null = null;

export function enableTrainingThreads(scriptPath: string): void {
  entry = scriptPath;
}

/** TUNEBOARD_TRAIN_THREADS (default: 2 when the machine has ≥ 2 cores); 1 disables the helper. */
export function trainingThreadCount(): number {
  return config.trainThreads;
}

export function isSftHelperThread(): boolean {
  return (workerData as { role?: unknown } | null)?.role === ROLE;
}

interface ShardReply {
  id: number;
  lossSum?: number;
  gradients?: Float32Array;
  error?: string;
}

export class SftHelperThread implements SftGradientHelper {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (r: { lossSum: number; gradients: Float32Array }) => void; reject: (e: Error) => void }
  >();

  private constructor(config: ModelConfig, script: string) {
    const data = { workerData: { role: ROLE, config } };
    // Under tsx (dev, tests) a worker thread does not inherit the --import loader, so a TypeScript entry is
    // loaded through tsx's require hook; the bundled worker (.mjs) loads directly.
    this.worker = script.endsWith('.ts')
      ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, { ...data, eval: true })
      : new Worker(script, data);
    this.worker.on('message', (m: ShardReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined || !m.gradients || m.lossSum === undefined)
        p.reject(new Error(m.error ?? 'helper thread sent no gradients'));
      else p.resolve({ lossSum: m.lossSum, gradients: m.gradients });
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => this.failAll(new Error(`training helper thread exited (${code})`)));
  }

  /** A helper for this model shape, or null when threads are off (tests, TUNEBOARD_TRAIN_THREADS=1). */
  static create(config: ModelConfig, script: string | null = entry): SftHelperThread | null {
    if (!script || trainingThreadCount() < 2) return null;
    return new SftHelperThread(config, script);
  }

  computeShard(shard: SftShard): Promise<{ lossSum: number; gradients: Float32Array }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // The weights are a fresh copy per step, so their buffer can move to the helper without a clone.
      this.worker.postMessage({ id, shard }, [shard.weights.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    this.pending.clear();
    await this.worker.terminate();
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

/** The helper thread's loop: one model copy, one shard per message, gradients transferred back. */
export function runSftHelperThread(): void {
  const port = parentPort;
  if (!port) throw new Error('runSftHelperThread must run in a worker thread');
  const config = parseModelConfig((workerData as { config: unknown }).config);
  const worker = new SftShardWorker(Model.create(config, { seed: 0 }));
  port.on('message', (m: { id: number; shard: SftShard }) => {
    try {
      const { lossSum, gradients } = worker.compute(m.shard);
      port.postMessage({ id: m.id, lossSum, gradients } satisfies ShardReply, [gradients.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies ShardReply);
    }
  });
}
