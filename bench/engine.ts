// Engine micro-benchmarks: matmul GFLOP/s for the shapes the transformer runs, prefill latency of a
// 100-token prompt, and decode tokens/s for 1 and 8 streams, on the 2-layer d=128 ctx128 byte-vocab model.
// Run: npx tsx bench/engine.ts            (Node 20: plain SIMD kernels)
//      npx tsx bench/engine.ts --relaxed  (enables V8's relaxed SIMD so the FMA kernels load)
import v8 from 'node:v8';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { Model, parameterCount, type KvCache, type ModelConfig } from '../lib/engine/model';
import { WasmHeap } from '../lib/engine/wasm/heap';

const relaxed = isMainThread ? process.argv.includes('--relaxed') : (workerData as { relaxed: boolean }).relaxed;
// V8 flags are per process, so the main thread's setting covers the workers too.
if (relaxed && isMainThread) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const config: ModelConfig = {
  vocab: 261,
  d_model: 128,
  n_layers: 2,
  n_heads: 4,
  n_kv_heads: 4,
  d_ff: 512,
  ctx: 128,
  rope_theta: 10000,
  norm_eps: 1e-5,
  tie_embeddings: true,
};
const prompt = Array.from({ length: 100 }, (_, i) => (i * 37) % 256);

/** Decodes `streams` sequences in batched steps from a 16-token prompt to the full context. */
function decodeRate(model: Model, streams: number): number {
  const caches: KvCache[] = Array.from({ length: streams }, (_, s) => {
    const cache = model.newCache();
    model.forward([{ tokens: prompt.slice(s, s + 16), cache }]);
    return cache;
  });
  const tokens = caches.map((_, s) => s + 1);
  const steps = config.ctx - 16;
  const t0 = performance.now();
  for (let i = 0; i < steps; i++) model.decodeStep(caches, tokens);
  const seconds = (performance.now() - t0) / 1000;
  for (const cache of caches) cache.release();
  return (steps * streams) / seconds;
}

if (!isMainThread) {
  // Worker: its own heap and model copy, as an inference worker per core would have.
  const { streams, rounds } = workerData as { streams: number; rounds: number; relaxed: boolean };
  const model = Model.create(config, { seed: 0, heap: new WasmHeap({ prefer: relaxed ? 'relaxed-simd' : 'simd' }) });
  decodeRate(model, streams);
  parentPort?.once('message', () => {
    const rates = Array.from({ length: rounds }, () => decodeRate(model, streams));
    parentPort?.postMessage(rates);
  });
  parentPort?.postMessage('ready');
} else {
  // No top-level await: tsx runs this file as CommonJS.
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

async function main(): Promise<void> {
  /** Best per-call time (ms) over several rounds: the machine is shared, the least disturbed round counts. */
  function timeIt(fn: () => void, roundMs = 80, rounds = 6): number {
    for (let i = 0; i < 3; i++) fn();
    let best = Infinity;
    for (let r = 0; r < rounds; r++) {
      let reps = 0;
      const t0 = performance.now();
      let t = t0;
      while (t - t0 < roundMs) {
        fn();
        reps++;
        t = performance.now();
      }
      best = Math.min(best, (t - t0) / reps);
    }
    return best;
  }

  const heap = new WasmHeap({ prefer: relaxed ? 'relaxed-simd' : 'simd', initialMegabytes: 64 });
  console.log(`kernels: ${heap.variant}, node ${process.version}`);

  type Layout = 'A·B' | 'A·Bᵀ' | 'Aᵀ·B';
  function matmul(label: string, M: number, N: number, K: number, layout: Layout, prepacked = false): void {
    const a = heap.alloc(M * K);
    const b = heap.alloc(K * N);
    const c = heap.alloc(M * N);
    const f = heap.f32;
    for (let i = 0; i < M * K; i++) f[a + i] = Math.sin(i);
    for (let i = 0; i < K * N; i++) f[b + i] = Math.cos(i);
    const [rsA, csA] = layout === 'Aᵀ·B' ? [1, M] : [K, 1];
    const [rsB, csB] = layout === 'A·Bᵀ' ? [1, K] : [N, 1];
    let ms: number;
    if (prepacked) {
      const p = heap.alloc(heap.packedBFloats(K, N));
      heap.packB(K, N, b, rsB, csB, p);
      ms = timeIt(() => heap.gemmPacked(M, N, K, a, rsA, csA, p, c, N));
      heap.release(p);
    } else {
      ms = timeIt(() => heap.gemm(M, N, K, a, rsA, csA, b, rsB, csB, c, N));
    }
    const gflops = (2 * M * N * K) / (ms / 1000) / 1e9;
    console.log(
      `  ${label.padEnd(34)} ${layout.padEnd(5)} ${`${M}×${N}×${K}`.padEnd(14)} ${gflops.toFixed(1).padStart(5)} GFLOP/s  ${(ms * 1000).toFixed(0)} µs${prepacked ? ' (B pre-packed)' : ''}`,
    );
    heap.release(c);
    heap.release(b);
    heap.release(a);
  }

  console.log('matmul (one thread):');
  matmul('square', 512, 512, 512, 'A·B');
  matmul('square', 512, 512, 512, 'A·Bᵀ');
  matmul('square', 512, 512, 512, 'Aᵀ·B');
  matmul('fwd q/k/v proj, B·T=1024 (d=128)', 1024, 128, 128, 'A·Bᵀ');
  matmul('fwd gate/up proj (d_ff=512)', 1024, 512, 128, 'A·Bᵀ');
  matmul('fwd down proj', 1024, 128, 512, 'A·Bᵀ');
  matmul('fwd lm_head (V=261)', 1024, 261, 128, 'A·Bᵀ');
  matmul('bwd dX = dY·W (gate/up)', 1024, 128, 512, 'A·B');
  matmul('bwd dW = dYᵀ·X (gate/up)', 512, 128, 1024, 'Aᵀ·B');
  matmul('attention scores Q·Kᵀ (T=128, hd=32)', 128, 128, 32, 'A·Bᵀ');
  matmul('attention P·V', 128, 32, 128, 'A·B');
  matmul('decode, 1 stream (gate/up)', 1, 512, 128, 'A·Bᵀ', true);
  matmul('decode, 8 streams (gate/up)', 8, 512, 128, 'A·Bᵀ', true);

  const model = Model.create(config, { seed: 0, heap });
  console.log(
    `\nmodel: 2 layers, d=128, 4 heads, d_ff=512, ctx=128, vocab=261, ${(parameterCount(config) / 1e6).toFixed(2)}M params`,
  );

  {
    const cache = model.newCache();
    const ms = timeIt(() => {
      cache.truncate(0);
      model.forward([{ tokens: prompt, cache }]);
    });
    console.log(
      `  prefill 100 tokens (first-token latency): ${ms.toFixed(2)} ms  (${((100 / ms) * 1000).toFixed(0)} tokens/s)`,
    );
    cache.release();
  }

  {
    // The training shape (batch 8 × 128 tokens, logits at every position): forward only, for the trainer.
    const batch = Array.from({ length: 8 }, (_, b) => ({
      tokens: Array.from({ length: 128 }, (_, i) => (i * 31 + b) % 256),
    }));
    const ms = timeIt(() => model.forward(batch, { allLogits: true }), 200, 4);
    console.log(
      `  forward 8×128 tokens, all logits (training shape): ${ms.toFixed(1)} ms  (${((1024 / ms) * 1000).toFixed(0)} tokens/s)`,
    );
  }

  // Interleaved rounds, best of each: the machine is shared, and alternating gives both batch sizes the
  // same chance of a quiet moment, so their ratio means something.
  decodeRate(model, 1); // warm-up
  let one = 0;
  let eight = 0;
  for (let r = 0; r < 6; r++) {
    for (let i = 0; i < 3; i++) one = Math.max(one, decodeRate(model, 1));
    eight = Math.max(eight, decodeRate(model, 8));
  }
  console.log(`  decode 1 stream:  ${one.toFixed(0)} tokens/s`);
  console.log(`  decode 8 streams: ${eight.toFixed(0)} tokens/s aggregate (${(eight / one).toFixed(2)}× one stream)`);
  model.release();

  // Two workers (one per core), each batching 4 of the 8 streams: the deployment lib/inference is meant to use.
  const workers = [0, 1].map(
    () =>
      // tsx's CommonJS hook lets the worker load this same TypeScript file.
      new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, {
        eval: true,
        workerData: { streams: 4, rounds: 5, relaxed },
      }),
  );
  await Promise.all(workers.map((w) => new Promise((resolve) => w.once('message', resolve))));
  const results = await Promise.all(
    workers.map((w) => {
      const done = new Promise<number[]>((resolve) => w.once('message', (m: number[]) => resolve(m)));
      w.postMessage('go');
      return done;
    }),
  );
  for (const w of workers) void w.terminate();
  const twoWorkers = Math.max(...results[0].map((r, i) => r + results[1][i]));
  console.log(
    `  decode 8 streams on 2 workers (4 each): ${twoWorkers.toFixed(0)} tokens/s aggregate (${(twoWorkers / one).toFixed(2)}× one stream)`,
  );
}
