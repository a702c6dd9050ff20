import { ATTENTION_GEMM_MIN_ROWS, causalAttention, type AttentionShape } from './attention';
import { Generator } from './random';
import { defaultHeap, type WasmHeap } from './wasm/heap';

/**
 * Decoder-only transformer in the Llama layout that llama.cpp and HF transformers share: token embedding,
 * pre-RMSNorm blocks with rotary multi-head (grouped-query) attention and a SwiGLU MLP, final RMSNorm,
 * lm_head optionally tied to the embedding. Weights use HF Llama names and HF semantics (RoPE rotates the
 * two halves of each head, `rotate_half`), so a GGUF export is convert_hf_to_gguf's mapping, including its
 * q/k row permutation.
 */
export interface ModelConfig {
  vocab: number;
  d_model: number;
  n_layers: number;
  n_heads: number;
  n_kv_heads: number;
  d_ff: number;
  /** Maximum context length (positions). */
  ctx: number;
  rope_theta: number;
  norm_eps: number;
  tie_embeddings: boolean;
}

export interface TensorSpec {
  name: string;
  shape: number[];
}

export function validateModelConfig(c: ModelConfig): void {
  const ints: Array<keyof ModelConfig> = ['vocab', 'd_model', 'n_layers', 'n_heads', 'n_kv_heads', 'd_ff', 'ctx'];
  for (const key of ints) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
      throw new Error(`model config: ${key} must be a positive integer`);
  }
  if (c.d_model % c.n_heads !== 0) throw new Error('model config: d_model must be divisible by n_heads');
  if ((c.d_model / c.n_heads) % 2 !== 0)
    throw new Error('model config: head dimension must be even (RoPE rotates pairs)');
  if (c.n_heads % c.n_kv_heads !== 0) throw new Error('model config: n_heads must be divisible by n_kv_heads');
  if (!(c.rope_theta > 0) || !(c.norm_eps > 0))
    throw new Error('model config: rope_theta and norm_eps must be positive');
}

/** Checks an untrusted value (JSON from a file or the database) and returns it as a ModelConfig. */
export function parseModelConfig(value: unknown): ModelConfig {
  if (typeof value !== 'object' || value === null) throw new Error('model config: not an object');
  const v = value as Record<string, unknown>;
  const num = (key: keyof ModelConfig): number => {
    const x = v[key];
    if (typeof x !== 'number') throw new Error(`model config: ${key} must be a number`);
    return x;
  };
  if (typeof v.tie_embeddings !== 'boolean') throw new Error('model config: tie_embeddings must be a boolean');
  const config: ModelConfig = {
    vocab: num('vocab'),
    d_model: num('d_model'),
    n_layers: num('n_layers'),
    n_heads: num('n_heads'),
    n_kv_heads: num('n_kv_heads'),
    d_ff: num('d_ff'),
    ctx: num('ctx'),
    rope_theta: num('rope_theta'),
    norm_eps: num('norm_eps'),
    tie_embeddings: v.tie_embeddings,
  };
  validateModelConfig(config);
  return config;
}

export function headDim(c: ModelConfig): number {
  return c.d_model / c.n_heads;
}

/**
 * RoPE's cos/sin tables, [ctx × head_dim/2], angles in float64 rounded once. The forward pass and the
 * trainer's backward both read them, so training and inference rotate identically.
 */
export function ropeTables(c: ModelConfig): { cos: Float32Array; sin: Float32Array } {
  const hd = headDim(c);
  const half = hd / 2;
  const cos = new Float32Array(c.ctx * half);
  const sin = new Float32Array(c.ctx * half);
  for (let i = 0; i < half; i++) {
    const invFreq = 1 / Math.pow(c.rope_theta, (2 * i) / hd);
    for (let p = 0; p < c.ctx; p++) {
      cos[p * half + i] = Math.cos(p * invFreq);
      sin[p * half + i] = Math.sin(p * invFreq);
    }
  }
  return { cos, sin };
}

/** Every parameter in canonical (safetensors) order, HF Llama names, [out, in] for linear weights. */
export function modelTensorSpecs(c: ModelConfig): TensorSpec[] {
  const hd = headDim(c);
  const q = c.n_heads * hd;
  const kv = c.n_kv_heads * hd;
  const specs: TensorSpec[] = [{ name: 'model.embed_tokens.weight', shape: [c.vocab, c.d_model] }];
  for (let l = 0; l < c.n_layers; l++) {
    const p = `model.layers.${l}`;
    specs.push(
      { name: `${p}.input_layernorm.weight`, shape: [c.d_model] },
      { name: `${p}.self_attn.q_proj.weight`, shape: [q, c.d_model] },
      { name: `${p}.self_attn.k_proj.weight`, shape: [kv, c.d_model] },
      { name: `${p}.self_attn.v_proj.weight`, shape: [kv, c.d_model] },
      { name: `${p}.self_attn.o_proj.weight`, shape: [c.d_model, q] },
      { name: `${p}.post_attention_layernorm.weight`, shape: [c.d_model] },
      { name: `${p}.mlp.gate_proj.weight`, shape: [c.d_ff, c.d_model] },
      { name: `${p}.mlp.up_proj.weight`, shape: [c.d_ff, c.d_model] },
      { name: `${p}.mlp.down_proj.weight`, shape: [c.d_model, c.d_ff] },
    );
  }
  specs.push({ name: 'model.norm.weight', shape: [c.d_model] });
  if (!c.tie_embeddings) specs.push({ name: 'lm_head.weight', shape: [c.vocab, c.d_model] });
  return specs;
}

export function parameterCount(c: ModelConfig): number {
  return modelTensorSpecs(c).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
}

interface Param {
  ptr: number;
  shape: number[];
  size: number;
}

/** Per-sequence key/value cache: for each layer, K and V rows of n_kv_heads·head_dim floats per position. */
export class KvCache {
  /** Positions already filled. */
  length = 0;
  readonly k: number[];
  readonly v: number[];
  private released = false;

  constructor(
    readonly heap: WasmHeap,
    readonly config: Readonly<ModelConfig>,
    readonly capacity: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > config.ctx) {
      throw new Error(`kv cache capacity must be in [1, ${config.ctx}]`);
    }
    const rowFloats = config.n_kv_heads * headDim(config);
    this.k = [];
    this.v = [];
    for (let l = 0; l < config.n_layers; l++) {
      this.k.push(heap.alloc(capacity * rowFloats));
      this.v.push(heap.alloc(capacity * rowFloats));
    }
  }

  /** Forgets positions from `length` on (e.g. to reuse a shared prompt prefix). */
  truncate(length: number): void {
    if (length < 0 || length > this.length)
      throw new RangeError(`cannot truncate cache of ${this.length} to ${length}`);
    this.length = length;
  }

  /** A copy holding the same filled positions: n > 1 choices share one prompt prefill. */
  clone(capacity = this.capacity): KvCache {
    if (capacity < this.length) throw new RangeError('clone capacity is smaller than the cached length');
    const copy = new KvCache(this.heap, this.config, capacity);
    const n = this.length * this.config.n_kv_heads * headDim(this.config);
    const f = this.heap.f32;
    for (let l = 0; l < this.config.n_layers; l++) {
      f.copyWithin(copy.k[l], this.k[l], this.k[l] + n);
      f.copyWithin(copy.v[l], this.v[l], this.v[l] + n);
    }
    copy.length = this.length;
    return copy;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (let l = 0; l < this.config.n_layers; l++) {
      this.heap.release(this.k[l]);
      this.heap.release(this.v[l]);
    }
  }
}

export interface ForwardInput {
  tokens: ArrayLike<number>;
  /** Appended to (and advanced) when given; without one the sequence is scored from position 0. */
  cache?: KvCache;
}

export interface ForwardOptions {
  /** Logits for every new position (prompt logprobs, training) instead of the last one only. */
  allLogits?: boolean;
}

/**
 * What generation and serving need of a model: the engine's own `Model` and the Hugging Face loader's
 * `HfModel` both fit.
 */
export interface LanguageModel {
  readonly config: Readonly<Pick<ModelConfig, 'ctx' | 'vocab'>>;
  forward(inputs: ForwardInput[], options?: ForwardOptions): Float32Array[];
  newCache(capacity?: number): KvCache;
}

export interface ModelInitOptions {
  seed?: number | bigint;
  heap?: WasmHeap;
}

export class Model {
  readonly config: ModelConfig;
  readonly heap: WasmHeap;
  private readonly params = new Map<string, Param>();
  // Weights packed for the matmul kernel (op(B) = Wᵀ in NR-column panels); rebuilt lazily after changes.
  private readonly packed = new Map<string, number>();
  // Names looked up on every step, built once rather than per layer per forward.
  private readonly layerNames: Array<
    Record<'inputNorm' | 'q' | 'k' | 'v' | 'o' | 'postNorm' | 'gate' | 'up' | 'down', string>
  >;
  private readonly ropeCos: Float32Array;
  private readonly ropeSin: Float32Array;
  private released = false;

  private constructor(config: ModelConfig, heap: WasmHeap) {
    validateModelConfig(config);
    this.config = { ...config };
    this.heap = heap;
    for (const spec of modelTensorSpecs(config)) {
      const size = spec.shape.reduce((a, b) => a * b, 1);
      this.params.set(spec.name, { ptr: heap.alloc(size), shape: spec.shape, size });
    }
    this.layerNames = Array.from({ length: config.n_layers }, (_, l) => {
      const p = `model.layers.${l}`;
      return {
        inputNorm: `${p}.input_layernorm.weight`,
        q: `${p}.self_attn.q_proj.weight`,
        k: `${p}.self_attn.k_proj.weight`,
        v: `${p}.self_attn.v_proj.weight`,
        o: `${p}.self_attn.o_proj.weight`,
        postNorm: `${p}.post_attention_layernorm.weight`,
        gate: `${p}.mlp.gate_proj.weight`,
        up: `${p}.mlp.up_proj.weight`,
        down: `${p}.mlp.down_proj.weight`,
      };
    });
    ({ cos: this.ropeCos, sin: this.ropeSin } = ropeTables(config));
  }

  /**
   * Seeded random init: N(0, 0.02) for embeddings and projections, with the residual-stream outputs
   * (o_proj, down_proj) scaled by 1/√(2·n_layers) as in GPT-2, and norm weights at 1.
   */
  static create(config: ModelConfig, options: ModelInitOptions = {}): Model {
    const model = new Model(config, options.heap ?? defaultHeap());
    const rng = new Generator(options.seed ?? 0);
    const residualStd = 0.02 / Math.sqrt(2 * config.n_layers);
    const f = model.heap.f32;
    for (const [name, p] of model.params) {
      if (name.endsWith('norm.weight')) {
        f.fill(1, p.ptr, p.ptr + p.size);
        continue;
      }
      const std = name.endsWith('o_proj.weight') || name.endsWith('down_proj.weight') ? residualStd : 0.02;
      for (let i = 0; i < p.size; i++) f[p.ptr + i] = rng.normal() * std;
    }
    return model;
  }

  /** Builds a model from named tensors (e.g. decoded safetensors); every parameter must be present. */
  static fromTensors(config: ModelConfig, tensors: ReadonlyMap<string, Float32Array>, heap?: WasmHeap): Model {
    const model = new Model(config, heap ?? defaultHeap());
    for (const [name] of model.params) {
      const data = tensors.get(name);
      if (!data) {
        model.release();
        throw new Error(`missing tensor ${name}`);
      }
      model.setTensor(name, data);
    }
    return model;
  }

  tensorNames(): string[] {
    return [...this.params.keys()];
  }

  /** A copy of one parameter. */
  getTensor(name: string): Float32Array {
    const p = this.param(name);
    return this.heap.f32.slice(p.ptr, p.ptr + p.size);
  }

  setTensor(name: string, data: ArrayLike<number>): void {
    const p = this.param(name);
    if (data.length !== p.size) throw new Error(`tensor ${name}: expected ${p.size} values, got ${data.length}`);
    this.heap.f32.set(data, p.ptr);
    this.invalidatePacked();
  }

  /** Copies of all parameters in canonical order, for safetensors export. */
  namedTensors(): Array<{ name: string; shape: number[]; data: Float32Array }> {
    return [...this.params].map(([name, p]) => ({ name, shape: [...p.shape], data: this.getTensor(name) }));
  }

  /** Heap location of a parameter, for an optimizer that updates weights in place. */
  parameterLocation(name: string): { ptr: number; size: number; shape: readonly number[] } {
    const p = this.param(name);
    return { ptr: p.ptr, size: p.size, shape: p.shape };
  }

  /** Must follow any in-place weight update, so the next forward repacks the changed weights. */
  invalidatePacked(): void {
    for (const ptr of this.packed.values()) this.heap.release(ptr);
    this.packed.clear();
  }

  newCache(capacity = this.config.ctx): KvCache {
    return new KvCache(this.heap, this.config, capacity);
  }

  /**
   * Runs new tokens of several sequences through the model in one pass: every projection is one matmul
   * over all new tokens together, so a prefill (one sequence, many tokens), a batched decode step (many
   * sequences, one token each) and any mix of them share this path. Returns raw logits per input:
   * [1 × vocab] (last position) or [n_new × vocab] with `allLogits`.
   */
  forward(inputs: ForwardInput[], options: ForwardOptions = {}): Float32Array[] {
    if (this.released) throw new Error('model was released');
    const c = this.config;
    const hd = headDim(c);
    const qDim = c.n_heads * hd;
    const kvDim = c.n_kv_heads * hd;
    const qkvW = qDim + 2 * kvDim;
    const d = c.d_model;
    const heap = this.heap;

    const caches: KvCache[] = [];
    const temporary: KvCache[] = [];
    const rowStart: number[] = [];
    let M = 0;
    for (const input of inputs) {
      const n = input.tokens.length;
      if (n === 0) throw new Error('forward: every input needs at least one token');
      for (let i = 0; i < n; i++) {
        const t = input.tokens[i];
        if (!Number.isInteger(t) || t < 0 || t >= c.vocab)
          throw new RangeError(`token id ${t} is outside the vocabulary (${c.vocab})`);
      }
      let cache = input.cache;
      if (cache && (cache.heap !== this.heap || !sameCacheLayout(cache.config, c))) {
        throw new Error('forward: kv cache belongs to another model or heap');
      }
      if (cache && caches.includes(cache)) throw new Error('forward: the same kv cache appears twice in one batch');
      if (!cache) {
        if (n > c.ctx) throw new RangeError(`sequence of ${n} tokens exceeds the context of ${c.ctx}`);
        cache = this.newCache(n);
        temporary.push(cache);
      } else if (cache.length + n > cache.capacity) {
        throw new RangeError(`kv cache full: ${cache.length} + ${n} tokens exceed its capacity of ${cache.capacity}`);
      }
      caches.push(cache);
      rowStart.push(M);
      M += n;
    }

    const x = heap.alloc(M * d);
    const xn = heap.alloc(M * d);
    const qkv = heap.alloc(M * qkvW);
    const att = heap.alloc(M * qDim);
    const gu = heap.alloc(M * 2 * c.d_ff);
    let maxScores = 0;
    inputs.forEach((input, s) => {
      const n = input.tokens.length;
      if (n >= ATTENTION_GEMM_MIN_ROWS) maxScores = Math.max(maxScores, n * (caches[s].length + n));
    });
    const scores = heap.alloc(Math.max(maxScores, c.ctx));

    try {
      this.embed(inputs, x);
      for (let l = 0; l < c.n_layers; l++) {
        const names = this.layerNames[l];
        this.rmsNorm(x, xn, M, this.param(names.inputNorm).ptr);
        this.linear(xn, M, d, names.q, qkv, qkvW, 0);
        this.linear(xn, M, d, names.k, qkv, qkvW, qDim);
        this.linear(xn, M, d, names.v, qkv, qkvW, qDim + kvDim);
        inputs.forEach((input, s) => {
          const n = input.tokens.length;
          const cache = caches[s];
          const row0 = rowStart[s];
          this.applyRope(qkv, qkvW, row0, n, cache.length, 0, c.n_heads);
          this.applyRope(qkv, qkvW, row0, n, cache.length, qDim, c.n_kv_heads);
          // This sequence's new keys and values into its cache, then its causal attention (attention.ts).
          causalAttention(
            this.heap,
            this.attentionShape,
            cache.k[l],
            cache.v[l],
            cache.length,
            n,
            qkv,
            qkvW,
            row0,
            att,
            scores,
          );
        });
        this.linear(att, M, qDim, names.o, x, d, 0, true);
        this.rmsNorm(x, xn, M, this.param(names.postNorm).ptr);
        this.linear(xn, M, d, names.gate, gu, 2 * c.d_ff, 0);
        this.linear(xn, M, d, names.up, gu, 2 * c.d_ff, c.d_ff);
        this.swiglu(gu, M, c.d_ff);
        this.linear(gu, M, c.d_ff, names.down, x, d, 0, true, 2 * c.d_ff);
      }

      // Only the rows whose logits are wanted go through the final norm and the vocabulary projection.
      const outRows: number[] = [];
      inputs.forEach((input, s) => {
        const n = input.tokens.length;
        if (options.allLogits) for (let t = 0; t < n; t++) outRows.push(rowStart[s] + t);
        else outRows.push(rowStart[s] + n - 1);
      });
      const R = outRows.length;
      const sel = xn; // reuse: R ≤ M rows
      {
        const f = heap.f32;
        outRows.forEach((r, i) => f.copyWithin(sel + i * d, x + r * d, x + r * d + d));
      }
      this.rmsNorm(sel, sel, R, this.param('model.norm.weight').ptr);
      const logits = heap.alloc(R * c.vocab);
      try {
        this.linear(sel, R, d, c.tie_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight', logits, c.vocab, 0);
        const f = heap.f32;
        const out: Float32Array[] = [];
        let r = 0;
        for (const input of inputs) {
          const rows = options.allLogits ? input.tokens.length : 1;
          out.push(f.slice(logits + r * c.vocab, logits + (r + rows) * c.vocab));
          r += rows;
        }
        inputs.forEach((input, s) => {
          caches[s].length += input.tokens.length;
        });
        return out;
      } finally {
        heap.release(logits);
      }
    } finally {
      for (const ptr of [scores, gu, att, qkv, xn, x]) heap.release(ptr);
      for (const cache of temporary) cache.release();
    }
  }

  /** One decode step for B sequences (one token each, each at its own cache length): [B × vocab] logits. */
  decodeStep(caches: KvCache[], tokens: ArrayLike<number>): Float32Array {
    if (caches.length !== tokens.length) throw new Error('decodeStep: one token per cache');
    const rows = this.forward(caches.map((cache, i) => ({ cache, tokens: [tokens[i]] })));
    const out = new Float32Array(rows.length * this.config.vocab);
    rows.forEach((r, i) => out.set(r, i * this.config.vocab));
    return out;
  }

  /** Frees the weights; caches made by this model must be released by their owners. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.invalidatePacked();
    for (const p of this.params.values()) this.heap.release(p.ptr);
    this.params.clear();
  }

  private param(name: string): Param {
    const p = this.params.get(name);
    if (!p) throw new Error(`unknown tensor ${name}`);
    return p;
  }

  private packedWeight(name: string): number {
    let ptr = this.packed.get(name);
    if (ptr === undefined) {
      const p = this.param(name);
      const [N, K] = p.shape;
      ptr = this.heap.alloc(this.heap.packedBFloats(K, N));
      // op(B) = Wᵀ: element (k, j) is W[j][k], so row stride 1 and column stride K.
      this.heap.packB(K, N, p.ptr, 1, K, ptr);
      this.packed.set(name, ptr);
    }
    return ptr;
  }

  /** out[:, col0 : col0+N] (+)= in[M × K] · Wᵀ with W = [N × K]. */
  private linear(
    input: number,
    M: number,
    K: number,
    weight: string,
    out: number,
    ldOut: number,
    col0: number,
    accumulate = false,
    ldIn = K,
  ): void {
    const N = this.param(weight).shape[0];
    const packed = this.packedWeight(weight);
    this.heap.gemmPacked(M, N, K, input, ldIn, 1, packed, out + col0, ldOut, accumulate);
  }

  private embed(inputs: ForwardInput[], x: number): void {
    const f = this.heap.f32;
    const d = this.config.d_model;
    const table = this.param('model.embed_tokens.weight').ptr;
    let r = 0;
    for (const input of inputs) {
      for (let i = 0; i < input.tokens.length; i++, r++) {
        const src = table + input.tokens[i] * d;
        f.copyWithin(x + r * d, src, src + d);
      }
    }
  }

  private rmsNorm(x: number, out: number, rows: number, weight: number): void {
    this.heap.rmsNormRows(x, out, rows, this.config.d_model, weight, this.config.norm_eps);
  }

  /** HF rotate_half RoPE on `heads` heads starting at column col0 of n rows at positions pos0…. */
  private applyRope(buf: number, ld: number, row0: number, n: number, pos0: number, col0: number, heads: number): void {
    const f = this.heap.f32;
    const hd = headDim(this.config);
    const half = hd / 2;
    for (let t = 0; t < n; t++) {
      const tab = (pos0 + t) * half;
      for (let h = 0; h < heads; h++) {
        const base = buf + (row0 + t) * ld + col0 + h * hd;
        for (let i = 0; i < half; i++) {
          const cos = this.ropeCos[tab + i];
          const sin = this.ropeSin[tab + i];
          const a = f[base + i];
          const b = f[base + i + half];
          f[base + i] = a * cos - b * sin;
          f[base + i + half] = b * cos + a * sin;
        }
      }
    }
  }

  private shapeCache?: AttentionShape;
  private get attentionShape(): AttentionShape {
    const c = this.config;
    return (this.shapeCache ??= { heads: c.n_heads, kvHeads: c.n_kv_heads, headDim: headDim(c) });
  }

  /** gate ← silu(gate)·up, in place in the [gate | up] buffer. */
  private swiglu(gu: number, M: number, dff: number): void {
    this.heap.swigluRows(gu, M, dff, 2 * dff, dff);
  }
}

function sameCacheLayout(a: Readonly<ModelConfig>, b: Readonly<ModelConfig>): boolean {
  return a.n_layers === b.n_layers && a.n_kv_heads === b.n_kv_heads && headDim(a) === headDim(b) && a.ctx === b.ctx;
}
