// Inference benchmark at the engine level: time to first token of a 100-token prompt and decode tokens/s for
// 1 and 8 concurrent streams, on our engine (one thread, generate() batching; and 8 streams over 2 worker
// threads) side by side with llama.cpp (node-llama-cpp's prebuilt CPU binding, one thread) running the same
// weights exported to GGUF, plus where our engine spends its time (prefill / decode forward / sampling).
//
// Run: npm run bench:inference            (relaxed-SIMD FMA kernels, as lib/inference's workers use)
//      npm run bench:inference -- --simd   (plain SIMD kernels)
//      npm run bench:inference -- --quick  (fewer rounds; the Hugging Face part: 135M shape, F16 only)
//
// The measuring functions are exported so an HTTP-level variant can reuse them and print the same table.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Llama, LlamaContextSequence, Token } from 'node-llama-cpp';
import { loadBaseModel, TINY_MODEL_CONFIG } from '../lib/engine/base-models';
import { generate, SequenceDecoder, type GenerationRequest } from '../lib/engine/generate';
import { exportGguf } from '../lib/engine/gguf';
import { Model, modelTensorSpecs, parameterCount, type KvCache, type ModelConfig } from '../lib/engine/model';
import { choiceGenerator, Generator } from '../lib/engine/random';
import { resolveSamplingParams, sampleNext, SequenceState } from '../lib/engine/sampler';
import { Tokenizer } from '../lib/engine/tokenizer';
import { WasmHeap } from '../lib/engine/wasm/heap';
import { runHfBench } from './hf-inference';
import { loadLlamaCpp } from './llama-cpp';

// ---------------------------------------------------------------------------------------------------------
// Shared settings

/** The 2-layer d=128 byte-level model (tiny-chat's architecture; ctx 256 so 100 + 128 tokens fit). */
export const BENCH_CONFIG: ModelConfig = TINY_MODEL_CONFIG;

export const PROMPT_TOKENS = 100;
export const DECODE_TOKENS = 128;
/** Same sampling on both engines: the sampler is part of what a request costs. */
export const SAMPLING = { temperature: 0.8, topP: 0.95 } as const;

/**
 * A chat-formatted prompt of exactly `length` tokens; `variant` changes its text so that concurrent streams
 * do not share a prefix (generate() would otherwise prefill them once).
 */
export function benchPrompt(tokenizer: Tokenizer, variant: number, length = PROMPT_TOKENS): number[] {
  const head = tokenizer.encode(`<|im_start|>user\nQuestion ${variant}: `);
  const tail = tokenizer.encode('<|im_end|>\n<|im_start|>assistant\n');
  const filler = tokenizer.encode(
    'Explain, in a few short sentences, how a small language model turns a prompt into a reply, and why '.repeat(4),
    { parseSpecialTokens: false },
  );
  const body = filler.slice(0, Math.max(0, length - head.length - tail.length));
  const ids = [...head, ...body, ...tail];
  if (ids.length !== length) throw new Error(`prompt of ${ids.length} tokens, wanted ${length}`);
  return ids;
}

function request(tokenizer: Tokenizer, prompt: number[], maxTokens: number, seed: number): GenerationRequest {
  return {
    promptTokenIds: prompt,
    maxTokens,
    sampling: { ...SAMPLING },
    // Fixed lengths: every stream decodes exactly maxTokens, whatever the weights predict.
    ignoreEos: true,
    eosTokenId: tokenizer.specialTokenId('<|im_end|>') ?? null,
    generator: choiceGenerator(seed, 0),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface TtftResult {
  /** Best and median over the rounds, milliseconds from request to first sampled token. */
  bestMs: number;
  medianMs: number;
}

export interface DecodeResult {
  streams: number;
  /**
   * Steady-state decode rate summed over streams, from each stream's median interval between consecutive
   * tokens: robust to the preemptions of a shared machine, which hit a few steps hard and most not at all.
   */
  aggregateTokensPerSecond: number;
  /** The same from wall-clock time: tokens after each stream's first / (last token − first token). */
  wallTokensPerSecond: number;
  /** Including prefill and first tokens: total generated tokens / wall time of the whole run. */
  endToEndTokensPerSecond: number;
}

/** Per-stream token timestamps, turned into the rates above. */
export class TokenClock {
  private readonly start = performance.now();
  private readonly times: number[][];

  constructor(readonly streams: number) {
    this.times = Array.from({ length: streams }, () => []);
  }

  tick(stream: number): void {
    this.times[stream].push(performance.now());
  }

  result(): DecodeResult {
    const all = this.times.flat();
    const first = Math.min(...this.times.map((t) => t[0]));
    const last = Math.max(...all);
    let rate = 0;
    for (const t of this.times) {
      const gaps: number[] = [];
      for (let i = 1; i < t.length; i++) gaps.push(t[i] - t[i - 1]);
      if (gaps.length) rate += 1000 / Math.max(median(gaps), 1e-3);
    }
    return {
      streams: this.streams,
      aggregateTokensPerSecond: rate,
      wallTokensPerSecond: (all.length - this.streams) / ((last - first) / 1000),
      endToEndTokensPerSecond: all.length / ((last - this.start) / 1000),
    };
  }
}

export interface EngineBreakdown {
  streams: number;
  prefillMs: number;
  decodeForwardMs: number;
  samplingMs: number;
  totalMs: number;
  tokens: number;
}

// ---------------------------------------------------------------------------------------------------------
// Our engine

/** First-token latency through generate(): prefill of the prompt plus sampling one token. */
export async function engineTtft(model: Model, tokenizer: Tokenizer, rounds: number): Promise<TtftResult> {
  const prompt = benchPrompt(tokenizer, 0);
  const times: number[] = [];
  for (let r = 0; r < rounds + 3; r++) {
    const t0 = performance.now();
    await generate(model, tokenizer, [request(tokenizer, prompt, 1, r)]);
    if (r >= 3) times.push(performance.now() - t0); // the first rounds pack weights and warm the JIT
  }
  return { bestMs: Math.min(...times), medianMs: median(times) };
}

/** `streams` concurrent requests through one generate() call (one batched forward per decode step). */
export async function engineDecode(
  model: Model,
  tokenizer: Tokenizer,
  streams: number,
  maxTokens = DECODE_TOKENS,
): Promise<DecodeResult> {
  const requests = Array.from({ length: streams }, (_, s) =>
    request(tokenizer, benchPrompt(tokenizer, s), maxTokens, s),
  );
  const clock = new TokenClock(streams);
  await generate(model, tokenizer, requests, { onToken: (e) => clock.tick(e.index) });
  return clock.result();
}

/**
 * generate()'s loop with timers around its three parts: prefill forwards, batched decode forwards, and
 * sampling + stop checks + detokenisation (SequenceDecoder.step). Same work, no event-loop yields.
 */
export function engineBreakdown(
  model: Model,
  tokenizer: Tokenizer,
  streams: number,
  maxTokens = DECODE_TOKENS,
): EngineBreakdown {
  const requests = Array.from({ length: streams }, (_, s) =>
    request(tokenizer, benchPrompt(tokenizer, s), maxTokens, s),
  );
  const decoders = requests.map((r) => new SequenceDecoder(tokenizer, r, model.config.ctx));
  const caches: KvCache[] = [];
  const pending: Float32Array[] = [];
  let prefillMs = 0;
  let decodeForwardMs = 0;
  let samplingMs = 0;
  const start = performance.now();
  try {
    for (const [i, r] of requests.entries()) {
      const t = performance.now();
      caches[i] = model.newCache(Math.min(model.config.ctx, r.promptTokenIds.length + r.maxTokens));
      [pending[i]] = model.forward([{ tokens: r.promptTokenIds, cache: caches[i] }]);
      prefillMs += performance.now() - t;
    }
    for (;;) {
      const t1 = performance.now();
      const active: number[] = [];
      decoders.forEach((d, i) => {
        if (d.finished) return;
        d.step(pending[i], i);
        if (!d.finished) active.push(i);
      });
      const t2 = performance.now();
      samplingMs += t2 - t1;
      if (active.length === 0) break;
      const logits = model.forward(
        active.map((i) => ({ tokens: [decoders[i].tokens[decoders[i].tokens.length - 1].tokenId], cache: caches[i] })),
      );
      active.forEach((i, j) => (pending[i] = logits[j]));
      decodeForwardMs += performance.now() - t2;
    }
  } finally {
    for (const c of caches) c.release();
  }
  const tokens = decoders.reduce((n, d) => n + d.tokens.length, 0);
  return { streams, prefillMs, decodeForwardMs, samplingMs, totalMs: performance.now() - start, tokens };
}

export interface StepCosts {
  /** Cache length the decode steps run at (prompt + half the generation: the average of a run). */
  cacheLength: number;
  /** Best single batched decode forward, µs per step, for 1 and 8 streams. */
  forward1Us: number;
  forward8Us: number;
  /** Best single call of the sampling pipeline (sampleNext, the bench's sampling params), µs per token. */
  sampleUs: number;
}

/**
 * Best-case (least disturbed) costs of the two parts of a decode step, to read the breakdown on a busy
 * machine: the batched forward, which amortises weights over streams, and per-sequence sampling, which
 * does not batch.
 */
export function engineStepCosts(model: Model, rounds = 40): StepCosts {
  const cacheLength = PROMPT_TOKENS + DECODE_TOKENS / 2;
  const stepBest = (streams: number) => {
    const caches = Array.from({ length: streams }, (_, s) => {
      const cache = model.newCache();
      model.forward([{ tokens: Array.from({ length: cacheLength }, (_, i) => (i * 7 + s) % 256), cache }]);
      return cache;
    });
    const tokens = caches.map((_, s) => s + 1);
    let best = Infinity;
    for (let r = 0; r < rounds; r++) {
      for (const c of caches) c.truncate(cacheLength);
      const t0 = performance.now();
      model.decodeStep(caches, tokens);
      best = Math.min(best, performance.now() - t0);
    }
    for (const c of caches) c.release();
    return best * 1000;
  };
  stepBest(1);
  stepBest(8);
  const rng = new Generator(1);
  const logits = Float32Array.from({ length: model.config.vocab }, () => rng.normal() * 2);
  const params = resolveSamplingParams({ ...SAMPLING });
  const state = new SequenceState([1]);
  for (let i = 0; i < 2000; i++) sampleNext(logits, params, state, rng, 0); // let the JIT settle
  // Single calls, best one: measured like the forward steps above (a long timing window on a busy machine
  // nearly always includes a preemption).
  let sampleBest = Infinity;
  for (let i = 0; i < 3000; i++) {
    const t0 = performance.now();
    sampleNext(logits, params, state, rng, 0);
    sampleBest = Math.min(sampleBest, (performance.now() - t0) * 1000);
  }
  return { cacheLength, forward1Us: stepBest(1), forward8Us: stepBest(8), sampleUs: sampleBest };
}

interface WorkerJob {
  benchInferenceWorker: true;
  weights: Float32Array[];
  config: ModelConfig;
  streams: number;
  firstVariant: number;
  rounds: number;
  relaxed: boolean;
}

/**
 * 8 streams over 2 worker threads, 4 batched per worker, each with its own heap and model copy — the layout
 * lib/inference uses (one worker per core). Workers run rounds in lock-step; a round's rate is the sum.
 */
export async function engineDecodeWorkers(
  model: Model,
  totalStreams: number,
  workers: number,
  rounds: number,
  relaxed: boolean,
): Promise<DecodeResult> {
  const weights = model.namedTensors().map((t) => t.data);
  const perWorker = totalStreams / workers;
  const pool = Array.from(
    { length: workers },
    (_, w) =>
      // tsx's CommonJS hook lets the worker load this same TypeScript file.
      new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, {
        eval: true,
        workerData: {
          benchInferenceWorker: true,
          weights,
          config: model.config,
          streams: perWorker,
          firstVariant: w * perWorker,
          rounds,
          relaxed,
        } satisfies WorkerJob,
      }),
  );
  try {
    await Promise.all(pool.map((w) => new Promise((resolve) => w.once('message', resolve))));
    let best: DecodeResult | null = null;
    for (let r = 0; r < rounds; r++) {
      const results = await Promise.all(
        pool.map((w) => {
          const done = new Promise<DecodeResult>((resolve, reject) => {
            w.once('message', (m: DecodeResult) => resolve(m));
            w.once('error', reject);
          });
          w.postMessage('go');
          return done;
        }),
      );
      const sum: DecodeResult = {
        streams: totalStreams,
        aggregateTokensPerSecond: results.reduce((s, x) => s + x.aggregateTokensPerSecond, 0),
        wallTokensPerSecond: results.reduce((s, x) => s + x.wallTokensPerSecond, 0),
        endToEndTokensPerSecond: results.reduce((s, x) => s + x.endToEndTokensPerSecond, 0),
      };
      if (!best || sum.aggregateTokensPerSecond > best.aggregateTokensPerSecond) best = sum;
    }
    if (!best) throw new Error('no rounds');
    return best;
  } finally {
    for (const w of pool) void w.terminate();
  }
}

async function workerMain(job: WorkerJob): Promise<void> {
  const heap = new WasmHeap({ prefer: job.relaxed ? 'relaxed-simd' : 'simd' });
  const config = job.config;
  const tensors = new Map<string, Float32Array>();
  // namedTensors() is in modelTensorSpecs order on both sides.
  modelTensorSpecs(config).forEach((spec, i) => tensors.set(spec.name, job.weights[i]));
  const model = Model.fromTensors(config, tensors, heap);
  const tokenizer = new Tokenizer();
  const run = async () => {
    const requests = Array.from({ length: job.streams }, (_, s) =>
      request(tokenizer, benchPrompt(tokenizer, job.firstVariant + s), DECODE_TOKENS, s),
    );
    const clock = new TokenClock(job.streams);
    await generate(model, tokenizer, requests, { onToken: (e) => clock.tick(e.index) });
    return clock.result();
  };
  await run(); // warm-up: packs weights, JIT
  parentPort?.on('message', () => {
    void run().then((r) => parentPort?.postMessage(r));
  });
  parentPort?.postMessage('ready');
}

// ---------------------------------------------------------------------------------------------------------
// llama.cpp through node-llama-cpp

export interface LlamaCppBench {
  ttft(rounds: number): Promise<TtftResult>;
  decode(streams: number, maxTokens?: number): Promise<DecodeResult>;
  dispose(): Promise<void>;
}

/** Opens a GGUF file in llama.cpp with a context of 8 sequences (one thread) for the measurements. */
export async function openLlamaCpp(
  llama: Llama,
  ggufPath: string,
  tokenizer: Tokenizer,
  ctx: number,
): Promise<LlamaCppBench> {
  const model = await llama.loadModel({ modelPath: ggufPath, gpuLayers: 0 });
  const context = await model.createContext({
    sequences: 8,
    contextSize: ctx * 8,
    // All eight prompts fit one batch, as our generate() prefills them before the first decode step.
    batchSize: PROMPT_TOKENS * 8,
    threads: 1,
  });
  const sequences: LlamaContextSequence[] = Array.from({ length: 8 }, () => context.getSequence());

  async function stream(
    seq: LlamaContextSequence,
    prompt: number[],
    maxTokens: number,
    seed: number,
    onToken: () => void,
  ) {
    await seq.clearHistory();
    let n = 0;
    const tokens = prompt.map((t) => t as Token);
    // yieldEogToken: like our ignoreEos, an end-of-generation token does not end the stream (by default the
    // generator would silently stop there).
    for await (const _token of seq.evaluate(tokens, { ...SAMPLING, seed, yieldEogToken: true })) {
      void _token;
      onToken();
      if (++n >= maxTokens) break;
    }
  }

  return {
    async ttft(rounds) {
      const prompt = benchPrompt(tokenizer, 0);
      const times: number[] = [];
      for (let r = 0; r < rounds + 3; r++) {
        const t0 = performance.now();
        let t1 = 0;
        await stream(sequences[0], prompt, 1, r, () => (t1 = performance.now()));
        if (r >= 3) times.push(t1 - t0);
      }
      return { bestMs: Math.min(...times), medianMs: median(times) };
    },
    async decode(streams, maxTokens = DECODE_TOKENS) {
      const clock = new TokenClock(streams);
      await Promise.all(
        Array.from({ length: streams }, (_, s) =>
          stream(sequences[s], benchPrompt(tokenizer, s), maxTokens, s, () => clock.tick(s)),
        ),
      );
      return clock.result();
    },
    async dispose() {
      await context.dispose();
      await model.dispose();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Report

export interface BenchRow {
  metric: string;
  ours: string;
  llamaCpp: string;
  goal: string;
}

export function formatTable(title: string, rows: BenchRow[]): string {
  const head: BenchRow = {
    metric: 'Metric',
    ours: 'Tuneboard engine',
    llamaCpp: 'llama.cpp (node-llama-cpp)',
    goal: 'Goal',
  };
  const all = [head, ...rows];
  const w = (k: keyof BenchRow) => Math.max(...all.map((r) => r[k].length));
  const line = (r: BenchRow) =>
    `| ${r.metric.padEnd(w('metric'))} | ${r.ours.padEnd(w('ours'))} | ${r.llamaCpp.padEnd(w('llamaCpp'))} | ${r.goal.padEnd(w('goal'))} |`;
  const sep = `| ${'-'.repeat(w('metric'))} | ${'-'.repeat(w('ours'))} | ${'-'.repeat(w('llamaCpp'))} | ${'-'.repeat(w('goal'))} |`;
  return [`${title}`, line(head), sep, ...rows.map(line)].join('\n');
}

const fmtTps = (x: number) => `${Math.round(x).toLocaleString('en-US')} tok/s`;
/** Median-step rate, then the wall-clock one in parentheses. */
const fmtRate = (r: DecodeResult, base?: DecodeResult) =>
  `${fmtTps(r.aggregateTokensPerSecond)}${base ? ` = ${(r.aggregateTokensPerSecond / base.aggregateTokensPerSecond).toFixed(2)}×` : ''} (wall ${Math.round(r.wallTokensPerSecond).toLocaleString('en-US')})`;
const ok = (pass: boolean) => (pass ? 'met' : 'NOT met');

/** Runs everything for one model and returns the table rows. */
export async function benchModel(
  label: string,
  model: Model,
  tokenizer: Tokenizer,
  options: { rounds: number; relaxed: boolean; llama: Llama | null; llamaError: string | null; tmpDir: string },
): Promise<{ rows: BenchRow[]; breakdown: EngineBreakdown[]; steps: StepCosts }> {
  const { rounds } = options;
  let lb: LlamaCppBench | null = null;
  if (options.llama) {
    const file = path.join(options.tmpDir, `${label.replace(/\W+/g, '_')}.gguf`);
    writeFileSync(file, exportGguf(model, tokenizer));
    lb = await openLlamaCpp(options.llama, file, tokenizer, model.config.ctx);
  }
  const better = (a: DecodeResult | null, b: DecodeResult) =>
    !a || b.aggregateTokensPerSecond > a.aggregateTokensPerSecond ? b : a;
  try {
    // Interleaved rounds (ours, then llama.cpp, each 1 then 8 streams), best of each: the machine is shared,
    // and alternating gives every variant the same chance of a quiet moment, so the ratios mean something.
    console.error(`[${label}] first token…`);
    const ttft = await engineTtft(model, tokenizer, rounds * 5);
    const lttft = lb ? await lb.ttft(rounds * 5) : null;
    console.error(`[${label}] decode 1 and 8 streams${lb ? ', ours and llama.cpp' : ''}…`);
    await engineDecode(model, tokenizer, 1, 16);
    await lb?.decode(1, 16);
    let one: DecodeResult | null = null;
    let eight: DecodeResult | null = null;
    let lone: DecodeResult | null = null;
    let leight: DecodeResult | null = null;
    for (let r = 0; r < rounds; r++) {
      one = better(one, await engineDecode(model, tokenizer, 1));
      eight = better(eight, await engineDecode(model, tokenizer, 8));
      if (lb) {
        lone = better(lone, await lb.decode(1));
        leight = better(leight, await lb.decode(8));
      }
    }
    if (!one || !eight) throw new Error('no rounds');
    console.error(`[${label}] ours: 8 streams on 2 workers…`);
    const workers = await engineDecodeWorkers(model, 8, 2, rounds, options.relaxed);
    console.error(`[${label}] ours: time breakdown…`);
    const breakdown = [1, 8].map((s) => {
      engineBreakdown(model, tokenizer, s, 8); // warm-up
      let best: EngineBreakdown | null = null;
      for (let r = 0; r < rounds; r++) {
        const b = engineBreakdown(model, tokenizer, s);
        if (!best || b.totalMs < best.totalMs) best = b;
      }
      if (!best) throw new Error('no rounds');
      return best;
    });
    const steps = engineStepCosts(model);
    const l = lttft && lone && leight ? { ttft: lttft, one: lone, eight: leight } : null;
    const na = options.llamaError ? `n/a (${options.llamaError.slice(0, 60)})` : 'n/a';
    const rows: BenchRow[] = [
      {
        metric: `First token, ${PROMPT_TOKENS}-token prompt (best / median)`,
        ours: `${ttft.bestMs.toFixed(2)} / ${ttft.medianMs.toFixed(2)} ms`,
        llamaCpp: l ? `${l.ttft.bestMs.toFixed(2)} / ${l.ttft.medianMs.toFixed(2)} ms` : na,
        goal: `≤ 50 ms: ${ok(ttft.medianMs <= 50)}`,
      },
      {
        metric: 'Decode, 1 stream',
        ours: fmtRate(one),
        llamaCpp: l ? fmtRate(l.one) : na,
        goal: l
          ? `≥ ½ llama.cpp (${Math.round(l.one.aggregateTokensPerSecond / 2)}): ${ok(one.aggregateTokensPerSecond >= l.one.aggregateTokensPerSecond / 2)} (${(one.aggregateTokensPerSecond / l.one.aggregateTokensPerSecond).toFixed(2)}×)`
          : '≥ ½ llama.cpp',
      },
      {
        metric: 'Decode, 8 streams, one thread (generate() batching)',
        ours: fmtRate(eight, one),
        llamaCpp: l ? fmtRate(l.eight, l.one) : na,
        goal: `≥ 3× one stream: ${ok(eight.aggregateTokensPerSecond >= 3 * one.aggregateTokensPerSecond)}`,
      },
      {
        metric: 'Decode, 8 streams, 2 worker threads × 4',
        ours: fmtRate(workers, one),
        llamaCpp: '—',
        goal: `≥ 3× one stream: ${ok(workers.aggregateTokensPerSecond >= 3 * one.aggregateTokensPerSecond)}`,
      },
      {
        metric: `End to end incl. prefill, 1 / 8 streams × ${DECODE_TOKENS} tokens`,
        ours: `${fmtTps(one.endToEndTokensPerSecond)} / ${fmtTps(eight.endToEndTokensPerSecond)}`,
        llamaCpp: l ? `${fmtTps(l.one.endToEndTokensPerSecond)} / ${fmtTps(l.eight.endToEndTokensPerSecond)}` : na,
        goal: '',
      },
    ];
    return { rows, breakdown, steps };
  } finally {
    await lb?.dispose();
  }
}

export function formatBreakdown(b: EngineBreakdown[]): string {
  const pct = (x: number, t: number) => `${((100 * x) / t).toFixed(0)}%`;
  const lines = [
    '| Streams | Prefill | Decode forward | Sampling + stop checks | Other | Total | per token |',
    '| - | - | - | - | - | - | - |',
  ];
  for (const x of b) {
    const other = x.totalMs - x.prefillMs - x.decodeForwardMs - x.samplingMs;
    lines.push(
      `| ${x.streams} | ${x.prefillMs.toFixed(1)} ms (${pct(x.prefillMs, x.totalMs)}) | ${x.decodeForwardMs.toFixed(1)} ms (${pct(x.decodeForwardMs, x.totalMs)}) | ${x.samplingMs.toFixed(1)} ms (${pct(x.samplingMs, x.totalMs)}) | ${other.toFixed(1)} ms | ${x.totalMs.toFixed(1)} ms | ${((1000 * x.totalMs) / x.tokens).toFixed(0)} µs |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const relaxed = !process.argv.includes('--simd');
  const rounds = process.argv.includes('--quick') ? 2 : 5;
  // V8 flags are per process and must be set before the first WebAssembly heap (Node 20 needs the flag).
  if (relaxed) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const heap = new WasmHeap({ prefer: relaxed ? 'relaxed-simd' : 'simd' });
  const tokenizer = new Tokenizer();

  const models: Array<{ label: string; model: Model; tokenizer: Tokenizer }> = [
    { label: 'random init 2L d=128', model: Model.create(BENCH_CONFIG, { seed: 1, heap }), tokenizer },
  ];
  // The built-in chat model when its trained weights are in the repository (same architecture).
  const tinyChat = 'models/tiny-chat.safetensors';
  if (existsSync(tinyChat)) {
    const built = loadBaseModel('tuneboard/tiny-chat', readFileSync(tinyChat), { heap });
    models.push({ label: 'tuneboard/tiny-chat', model: built.model, tokenizer: built.tokenizer });
  } else {
    console.error(`(${tinyChat} not present: benchmarking the random-init model only)`);
  }

  const loaded = await loadLlamaCpp();
  const llama = 'llama' in loaded ? loaded.llama : null;
  const llamaError = 'error' in loaded ? loaded.error : null;
  if (llamaError) console.error(`llama.cpp unavailable: ${llamaError}`);
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'tuneboard-bench-'));
  try {
    console.log(
      `node ${process.version}, kernels: ${heap.variant}, ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), llama.cpp threads: 1, load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}\n` +
        `prompt ${PROMPT_TOKENS} tokens, ${DECODE_TOKENS} generated per stream, sampling t=${SAMPLING.temperature} top_p=${SAMPLING.topP}, best of ${rounds} rounds\n`,
    );
    for (const { label, model, tokenizer: tok } of models) {
      const { rows, breakdown, steps } = await benchModel(label, model, tok, {
        rounds,
        relaxed,
        llama,
        llamaError,
        tmpDir,
      });
      const c = model.config;
      console.log(
        formatTable(
          `${label}: ${c.n_layers} layers, d=${c.d_model}, ${c.n_heads} heads, d_ff=${c.d_ff}, ctx=${c.ctx}, vocab=${c.vocab}, ${(parameterCount(c) / 1e6).toFixed(2)}M params`,
          rows,
        ),
      );
      console.log(`\nWhere our engine spends the time (${DECODE_TOKENS} tokens per stream, one thread):`);
      console.log(formatBreakdown(breakdown));
      console.log(
        `Least-disturbed step costs at cache length ${steps.cacheLength}: decode forward ${steps.forward1Us.toFixed(0)} µs ` +
          `(1 stream), ${steps.forward8Us.toFixed(0)} µs = ${(steps.forward8Us / 8).toFixed(0)} µs/token (8 streams batched, ` +
          `${((8 * steps.forward1Us) / steps.forward8Us).toFixed(2)}×); sampling ${steps.sampleUs.toFixed(0)} µs/token per stream ` +
          `(not batched). Implied one-thread ceiling: 1 stream ${Math.round(1e6 / (steps.forward1Us + steps.sampleUs))} tok/s, ` +
          `8 streams ${Math.round((8 * 1e6) / (steps.forward8Us + 8 * steps.sampleUs))} tok/s.`,
      );
      console.log('');
      model.release();
    }
    // Hugging Face models of real sizes (SmolLM2-135M and Qwen3-0.6B shapes) next to llama.cpp F16 / Q8_0.
    console.log('\n## Hugging Face models (bench/hf-inference.ts)');
    console.log(await runHfBench({ quick: process.argv.includes('--quick'), llama, llamaError }));
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
    await llama?.dispose();
  }
}

if (!isMainThread && (workerData as Partial<WorkerJob> | null)?.benchInferenceWorker) {
  void workerMain(workerData as WorkerJob);
} else if (isMainThread && path.resolve(process.argv[1] ?? '') === __filename) {
  // No top-level await: tsx runs this file as CommonJS.
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
