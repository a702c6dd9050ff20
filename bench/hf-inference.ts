// Hugging Face part of `npm run bench:inference`: the built-in engine on Llama-family models of real sizes
// (SmolLM2-135M's and Qwen3-0.6B's shapes, random bf16 weights, built in memory: no download, no Python)
// next to llama.cpp (node-llama-cpp's prebuilt CPU binding) on the same weights as GGUF F16 and Q8_0.
// Time to first token of a 100-token prompt, decode tokens/s for 1 and 8 streams, both engines on one thread.
//
// Run alone: npx tsx bench/hf-inference.ts [--quick] [--tokens N] [--rounds N] [--shape smollm2|qwen3] [--format F16|Q8_0] [--skip-wasm]
// (bench/inference.ts runs it after the tiny models)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import type { Llama, LlamaContextSequence, Token } from 'node-llama-cpp';
import { generate, type GenerationRequest } from '../lib/engine/generate';
import { exportHfGguf, type GgufMatrixType } from '../lib/engine/hf/gguf-export';
import { HfModel } from '../lib/engine/hf/model';
import { choiceGenerator } from '../lib/engine/random';
import type { TokenPieces } from '../lib/engine/tokenizer';
import { WasmHeap } from '../lib/engine/wasm/heap';
import { LlamaCppModel } from '../lib/inference/llama-cpp';
import { BatchScheduler } from '../lib/inference/scheduler';
import { loadLlamaCpp } from './llama-cpp';

export interface HfBenchShape {
  label: string;
  config: Record<string, unknown>;
}

const common = { hidden_act: 'silu', rms_norm_eps: 1e-5, max_position_embeddings: 8192, tie_word_embeddings: true };

export const SMOLLM2_135M: HfBenchShape = {
  label: 'SmolLM2-135M shape (llama)',
  config: {
    ...common,
    model_type: 'llama',
    hidden_size: 576,
    num_hidden_layers: 30,
    num_attention_heads: 9,
    num_key_value_heads: 3,
    intermediate_size: 1536,
    vocab_size: 49152,
    rope_theta: 100000,
  },
};

export const QWEN3_0_6B: HfBenchShape = {
  label: 'Qwen3-0.6B shape (qwen3)',
  config: {
    ...common,
    model_type: 'qwen3',
    hidden_size: 1024,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    intermediate_size: 3072,
    vocab_size: 151936,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
  },
};

/**
 * CI's smoke test: SmolLM2-135M's shape with 6 of its 30 layers runs every code path the full shape does (weights,
 * GGUF export, both engines), in a fifth of the time (the full shape took 31 of bench:inference --quick's 43 s).
 */
const SMOLLM2_135M_6_LAYERS: HfBenchShape = {
  label: 'SmolLM2-135M shape, 6 of its 30 layers (--quick)',
  config: { ...SMOLLM2_135M.config, num_hidden_layers: 6 },
};

/** Tensor names and shapes of a Llama-family checkpoint with this config (HF names). */
function tensorShapes(c: Record<string, number | boolean | string>): Array<[string, number[]]> {
  const h = c.hidden_size as number;
  const heads = c.num_attention_heads as number;
  const hd = (c.head_dim as number | undefined) ?? h / heads;
  const q = heads * hd;
  const kv = (c.num_key_value_heads as number) * hd;
  const ff = c.intermediate_size as number;
  const out: Array<[string, number[]]> = [['model.embed_tokens.weight', [c.vocab_size as number, h]]];
  for (let l = 0; l < (c.num_hidden_layers as number); l++) {
    const p = `model.layers.${l}`;
    out.push(
      [`${p}.input_layernorm.weight`, [h]],
      [`${p}.self_attn.q_proj.weight`, [q, h]],
      [`${p}.self_attn.k_proj.weight`, [kv, h]],
      [`${p}.self_attn.v_proj.weight`, [kv, h]],
      [`${p}.self_attn.o_proj.weight`, [h, q]],
      [`${p}.post_attention_layernorm.weight`, [h]],
      [`${p}.mlp.gate_proj.weight`, [ff, h]],
      [`${p}.mlp.up_proj.weight`, [ff, h]],
      [`${p}.mlp.down_proj.weight`, [h, ff]],
    );
    if (c.model_type === 'qwen3')
      out.push([`${p}.self_attn.q_norm.weight`, [hd]], [`${p}.self_attn.k_norm.weight`, [hd]]);
  }
  out.push(['model.norm.weight', [h]]);
  return out;
}

/** The spread of the benchmark model's logits (see randomHfSafetensors). */
const LOGIT_RMS = 5;

/**
 * A bf16 safetensors file with random weights: matrices uniform with std 0.02, norms 1 but the final one. A xorshift stream
 * written straight into bf16 bits keeps 600M values to a couple of seconds.
 */
export function randomHfSafetensors(config: Record<string, unknown>, seed = 1): { bytes: Uint8Array; params: number } {
  const shapes = tensorShapes(config as Record<string, number | boolean | string>);
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of shapes) {
    const n = shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'BF16', shape, data_offsets: [offset, offset + 2 * n] };
    offset += 2 * n;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const hb = new Uint8Array(padded).fill(0x20);
  hb.set(json);
  json = hb;
  const bytes = new Uint8Array(8 + json.length + offset);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(json, 8);
  const data = new Uint16Array(bytes.buffer, 8 + json.length, offset / 2);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  let s = seed >>> 0 || 1;
  let at = 0;
  const a = 0.02 * Math.sqrt(3);
  // The final norm's weight sets the logits' spread: with 1, random weights give logits of rms 0.02·√hidden (0.5),
  // a next-token distribution almost flat over the vocabulary, unlike a trained model's. Logits of rms 5 put about
  // half the probability on the top token at t = 0.8 and a few hundred tokens within 10 nats of it, which is what
  // sampling on the head of the distribution (lib/engine/sampler.ts, sampleNextCompact) meets in a real model.
  const hidden = config.hidden_size as number;
  f[0] = LOGIT_RMS / (0.02 * Math.sqrt(hidden));
  const finalNorm = u[0] >>> 16;
  for (const [name, shape] of shapes) {
    const n = shape.reduce((x, y) => x * y, 1);
    if (name === 'model.norm.weight') {
      data.fill(finalNorm, at, at + n);
    } else if (shape.length === 1) {
      data.fill(0x3f80, at, at + n); // 1.0
    } else {
      for (let i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >>> 17;
        s ^= s << 5;
        f[0] = ((s >>> 0) / 4294967296 - 0.5) * 2 * a;
        data[at + i] = u[0] >>> 16;
      }
    }
    at += n;
  }
  return { bytes, params: offset / 2 };
}

/** Placeholder vocabulary (`t<id>`): the benchmark feeds token ids and only needs bytes for detokenising. */
class BenchVocab implements TokenPieces {
  private readonly enc = new TextEncoder();
  constructor(readonly vocabSize: number) {}
  tokenBytes(id: number): Uint8Array {
    return this.enc.encode(`t${id} `);
  }
  tokenText(id: number): string {
    return `t${id} `;
  }
  isSpecial(): boolean {
    return false;
  }
  decode(ids: ArrayLike<number>): string {
    return Array.from(ids, (id) => this.tokenText(id)).join('');
  }
}

const PROMPT = 100;
/** The first-token prompt (issue 44's goal is set at 512 tokens). */
const TTFT_PROMPT = 512;
const SAMPLING = { temperature: 0.8, topP: 0.95 } as const;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function prompt(vocab: number, variant: number, length = PROMPT): number[] {
  let s = 12345 + variant * 7919;
  return Array.from({ length }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return 256 + (s % (vocab - 512));
  });
}

interface Rates {
  ttftMs: number;
  one: number;
  eight: number;
  /** Share of sampled steps the head of the distribution decided (Tuneboard on llama.cpp, sampling). */
  headShare?: number;
  /** Of the sampled steps at T < 1, the share that read the normaliser at T (its bound from z1 left the draw open). */
  temperatureReadShare?: number;
}

/** Decode rate from each stream's median inter-token interval, summed over streams (robust to preemption). */
function rate(times: number[][]): number {
  let r = 0;
  for (const t of times) {
    const gaps: number[] = [];
    for (let i = 1; i < t.length; i++) gaps.push(t[i] - t[i - 1]);
    if (gaps.length) r += 1000 / Math.max(median(gaps), 1e-3);
  }
  return r;
}

async function oursRates(model: HfModel, tokens: number, rounds: number): Promise<Rates> {
  const vocab = new BenchVocab(model.config.vocab);
  const req = (variant: number, maxTokens: number, seed: number, length = PROMPT): GenerationRequest => ({
    promptTokenIds: prompt(model.config.vocab, variant, length),
    maxTokens,
    sampling: { ...SAMPLING },
    ignoreEos: true,
    eosTokenId: null,
    generator: choiceGenerator(seed, 0),
  });
  const ttfts: number[] = [];
  for (let r = 0; r < rounds + 1; r++) {
    const t0 = performance.now();
    await generate(model, vocab, [req(0, 1, r, TTFT_PROMPT)]);
    if (r >= 1) ttfts.push(performance.now() - t0);
  }
  const decode = async (streams: number) => {
    const times: number[][] = Array.from({ length: streams }, () => []);
    await generate(
      model,
      vocab,
      Array.from({ length: streams }, (_, s) => req(s, tokens, s)),
      { onToken: (e) => times[e.index].push(performance.now()) },
    );
    return rate(times);
  };
  return { ttftMs: Math.min(...ttfts), ...(await bestDecodeRates(rounds, decode)) };
}

async function llamaRates(llama: Llama, file: string, vocab: number, tokens: number, rounds: number): Promise<Rates> {
  const model = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
  const context = await model.createContext({
    sequences: 8,
    contextSize: (TTFT_PROMPT + tokens + 8) * 8,
    batchSize: TTFT_PROMPT,
    threads: 1,
  });
  try {
    const seqs: LlamaContextSequence[] = Array.from({ length: 8 }, () => context.getSequence());
    const stream = async (s: number, maxTokens: number, seed: number, onToken: () => void, length = PROMPT) => {
      await seqs[s].clearHistory();
      let n = 0;
      for await (const _t of seqs[s].evaluate(prompt(vocab, s, length) as Token[], {
        ...SAMPLING,
        seed,
        yieldEogToken: true,
      })) {
        void _t;
        onToken();
        if (++n >= maxTokens) break;
      }
    };
    const ttfts: number[] = [];
    for (let r = 0; r < rounds + 1; r++) {
      const t0 = performance.now();
      let t1 = 0;
      await stream(0, 1, r, () => (t1 = performance.now()), TTFT_PROMPT);
      if (r >= 1) ttfts.push(t1 - t0);
    }
    const decode = async (streams: number) => {
      const times: number[][] = Array.from({ length: streams }, () => []);
      await Promise.all(
        Array.from({ length: streams }, (_, s) => stream(s, tokens, s, () => times[s].push(performance.now()))),
      );
      return rate(times);
    };
    return { ttftMs: Math.min(...ttfts), ...(await bestDecodeRates(rounds, decode)) };
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

/**
 * Tuneboard's serving path on llama.cpp (lib/inference/llama-cpp.ts): our scheduler and sampler on llama.cpp's
 * logits. `greedy`: temperature 0, where a step reads the argmax and the normaliser only; otherwise the
 * benchmark's sampling, where a step reads the head of the distribution and the normalisers, and every logit
 * only when the draw lands beyond the head (headShare says how often it did not).
 */
async function tuneboardOnLlamaRates(
  llama: Llama,
  file: string,
  vocab: number,
  tokens: number,
  rounds: number,
  greedy: boolean,
): Promise<Rates> {
  const model = await LlamaCppModel.open(llama, file, {
    slots: 8,
    ctx: TTFT_PROMPT + tokens + 8,
    vocab,
    batchSize: TTFT_PROMPT,
  });
  const pieces = new BenchVocab(vocab);
  const scheduler = new BatchScheduler(model, pieces);
  const sampling = greedy ? { temperature: 0 } : { ...SAMPLING };
  const req = (variant: number, maxTokens: number, seed: number, length = PROMPT): GenerationRequest => ({
    promptTokenIds: prompt(vocab, variant, length),
    maxTokens,
    sampling,
    ignoreEos: true,
    eosTokenId: null,
    generator: choiceGenerator(seed, 0),
  });
  let n = 0;
  const run = (sequences: GenerationRequest[], onToken: (choice: number) => void) =>
    Promise.all(
      sequences.map(
        (seq, i) =>
          new Promise<void>((resolve, reject) =>
            scheduler.submit({
              id: `b${n++}`,
              sequences: [seq],
              promptLogprobs: null,
              onEvents: (events) => events.forEach((e) => e.type === 'token' && onToken(i)),
              onDone: () => resolve(),
              onError: reject,
            }),
          ),
      ),
    );
  try {
    const ttfts: number[] = [];
    for (let r = 0; r < rounds + 1; r++) {
      const t0 = performance.now();
      let t1 = 0;
      await run([req(0, 1, r, TTFT_PROMPT)], () => (t1 = performance.now()));
      if (r >= 1) ttfts.push(t1 - t0);
    }
    const decode = async (streams: number) => {
      const times: number[][] = Array.from({ length: streams }, () => []);
      await run(
        Array.from({ length: streams }, (_, s) => req(s, tokens, s)),
        (i) => times[i].push(performance.now()),
      );
      return rate(times);
    };
    const rates = await bestDecodeRates(rounds, decode);
    const steps = Math.max(1, model.headReads + model.fallbacks);
    const headShare = greedy ? undefined : model.headReads / steps;
    const temperatureReadShare = greedy ? undefined : model.temperatureReads / steps;
    return { ttftMs: Math.min(...ttfts), ...rates, headShare, temperatureReadShare };
  } finally {
    await model.release();
  }
}

/**
 * The machine's memory bandwidth as STREAM's copy measures it: a Float64Array copied into another (read + write),
 * best of a few, large enough to miss every cache.
 */
export function memoryBandwidth(megabytes = 128, repeats = 5): number {
  const a = new Float64Array((megabytes << 20) / 8).fill(1);
  const b = new Float64Array(a.length);
  let best = Infinity;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    b.set(a);
    best = Math.min(best, performance.now() - t0);
  }
  return (2 * a.byteLength) / (best / 1000);
}

export interface HfBenchOptions {
  quick: boolean;
  llama: Llama | null;
  llamaError: string | null;
  heap?: WasmHeap;
  /** Tokens per stream and rounds (defaults: 12 and 1 with quick, else 48 and 2). */
  tokens?: number;
  rounds?: number;
  /** Only the shapes whose label starts with this (case-insensitive), e.g. "qwen3" (the full run takes 20+ minutes). */
  shape?: string;
  /** Only this GGUF precision ("F16" or "Q8_0"). */
  format?: string;
  /** Leave out the WebAssembly engine's row (minutes at Qwen3-0.6B's shape; the goals are about llama.cpp). */
  skipWasm?: boolean;
}

/** Runs the Hugging Face rows and returns the report as markdown. */
export async function runHfBench(options: HfBenchOptions): Promise<string> {
  const shapes = (options.quick ? [SMOLLM2_135M_6_LAYERS] : [SMOLLM2_135M, QWEN3_0_6B]).filter(
    (s) => !options.shape || s.label.toLowerCase().startsWith(options.shape.toLowerCase()),
  );
  const formats = (options.quick ? ['F16'] : ['F16', 'Q8_0']).filter(
    (f) => !options.format || f === options.format,
  ) as GgufMatrixType[];
  const tokens = options.tokens ?? (options.quick ? 12 : 48);
  const rounds = options.rounds ?? (options.quick ? 1 : 2);
  const heap = options.heap ?? new WasmHeap();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tuneboard-hf-bench-'));
  const bandwidth = memoryBandwidth(options.quick ? 64 : 256);
  const lines: string[] = [
    `\nMemory bandwidth (STREAM-style Float64Array copy, read + write, best of 5): ${(bandwidth / 1e9).toFixed(1)} GB/s. ` +
      'Bandwidth share = decode tok/s (1 stream) × bytes of weights read per token ÷ that.',
  ];
  try {
    for (const shape of shapes) {
      const t0 = performance.now();
      const { bytes, params } = randomHfSafetensors(shape.config);
      const model = HfModel.load(shape.config, [bytes], { heap, maxContext: 1024 });
      const vocab = model.config.vocab;
      console.error(
        `[${shape.label}] ${(params / 1e6).toFixed(0)}M params built in ${((performance.now() - t0) / 1000).toFixed(1)} s; ours…`,
      );
      let ours: Rates | string = 'left out (--skip-wasm)';
      try {
        if (!options.skipWasm) ours = await oursRates(model, tokens, rounds);
      } finally {
        model.release();
      }
      // Bytes of weights read per decoded token: bf16 / F16 = 2 per parameter, Q8_0 = 34 per 32.
      const bytesPerToken = (fmt: 'bf16' | GgufMatrixType) => params * (fmt === 'Q8_0' ? 34 / 32 : 2);
      const rows: Array<{ name: string; fmt: 'bf16' | GgufMatrixType; r: Rates | string; ref?: string }> = [
        { name: 'Tuneboard WebAssembly engine (bf16 weights, f32 compute)', fmt: 'bf16', r: ours, ref: 'F16' },
      ];
      // Each row's figures as soon as it is measured (stderr): a full run takes many minutes per shape.
      const add = (row: (typeof rows)[number]) => {
        rows.push(row);
        const r = row.r;
        if (typeof r !== 'string')
          console.error(
            `[${shape.label}] ${row.name}: first token ${r.ttftMs.toFixed(0)} ms, ${r.one.toFixed(1)} tok/s at 1 stream, ${r.eight.toFixed(1)} at 8`,
          );
      };
      for (const fmt of formats) {
        if (!options.llama) {
          rows.push({ name: `llama.cpp ${fmt}`, fmt, r: `n/a (${(options.llamaError ?? '').slice(0, 80)})` });
          continue;
        }
        const file = path.join(tmp, `${fmt}.gguf`);
        writeFileSync(file, exportHfGguf(shape.config, bytes, fmt));
        try {
          console.error(`[${shape.label}] llama.cpp ${fmt}…`);
          add({
            name: `llama.cpp ${fmt} (its own sampler)`,
            fmt,
            r: await llamaRates(options.llama, file, vocab, tokens, rounds),
          });
          console.error(`[${shape.label}] Tuneboard on llama.cpp ${fmt}…`);
          add({
            name: `Tuneboard on llama.cpp ${fmt}, greedy (top logits + normaliser)`,
            fmt,
            r: await tuneboardOnLlamaRates(options.llama, file, vocab, tokens, rounds, true),
            ref: fmt,
          });
          const sampled = await tuneboardOnLlamaRates(options.llama, file, vocab, tokens, rounds, false);
          add({
            name: `Tuneboard on llama.cpp ${fmt}, sampled (head of the distribution: ${(100 * (sampled.headShare ?? 0)).toFixed(0)}% of steps, normaliser at T read on ${(100 * (sampled.temperatureReadShare ?? 0)).toFixed(0)}%)`,
            fmt,
            r: sampled,
            ref: fmt,
          });
        } finally {
          rmSync(file, { force: true });
        }
      }
      lines.push(
        `\n### ${shape.label}: ${(params / 1e6).toFixed(0)}M parameters, random weights\n`,
        `Decode: ${PROMPT}-token prompts, ${tokens} tokens per stream, t=${SAMPLING.temperature} top_p=${SAMPLING.topP} unless greedy; first token: a ${TTFT_PROMPT}-token prompt; one thread; best of ${rounds}; load ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}\n`,
        '| Engine | First token | Decode, 1 stream | Decode, 8 streams (sum) | Bandwidth share | vs llama.cpp, same precision (goal ≥ 0.8× first token, ≥ 0.9× decode) |',
        '| - | - | - | - | - | - |',
      );
      for (const { name, fmt, r, ref } of rows) {
        if (typeof r === 'string') {
          lines.push(`| ${name} | ${r} | | | | |`);
          continue;
        }
        const base = rows.find((x) => x.name.startsWith(`llama.cpp ${ref}`))?.r;
        let vs = '';
        if (base && typeof base !== 'string') {
          const t = base.ttftMs / r.ttftMs;
          const one = r.one / base.one;
          const eight = r.eight / base.eight;
          const met = (x: number, goal: number) => `${x.toFixed(2)}× ${x >= goal ? '(met)' : '(NOT met)'}`;
          vs = `first token ${met(t, 0.8)}, 1 stream ${met(one, 0.9)}, 8 streams ${met(eight, 0.9)}`;
        }
        const share = (r.one * bytesPerToken(fmt)) / bandwidth;
        lines.push(
          `| ${name} | ${r.ttftMs.toFixed(0)} ms | ${r.one.toFixed(1)} tok/s | ${r.eight.toFixed(1)} tok/s | ${(100 * share).toFixed(0)}% | ${vs} |`,
        );
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const quick = process.argv.includes('--quick');
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const loaded = await loadLlamaCpp();
  const llama = 'llama' in loaded ? loaded.llama : null;
  try {
    console.log(
      `node ${process.version}, ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), load ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      await runHfBench({
        quick,
        llama,
        llamaError: 'error' in loaded ? loaded.error : null,
        tokens: arg('--tokens'),
        rounds: arg('--rounds'),
        shape: process.argv.includes('--shape') ? process.argv[process.argv.indexOf('--shape') + 1] : undefined,
        skipWasm: process.argv.includes('--skip-wasm'),
        format: process.argv.includes('--format') ? process.argv[process.argv.indexOf('--format') + 1] : undefined,
      }),
    );
  } finally {
    await llama?.dispose();
  }
}

if (path.resolve(process.argv[1] ?? '') === __filename) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/**
 * The best of `rounds` interleaved decodes at one stream and at eight: the machine is shared, so each engine's best
 * round is its figure, and interleaving keeps a busy moment from landing on one stream count only.
 */
async function bestDecodeRates(
  rounds: number,
  decode: (streams: number) => Promise<number>,
): Promise<{ one: number; eight: number }> {
  let one = 0;
  let eight = 0;
  for (let r = 0; r < rounds; r++) {
    one = Math.max(one, await decode(1));
    eight = Math.max(eight, await decode(8));
  }
  return { one, eight };
}
