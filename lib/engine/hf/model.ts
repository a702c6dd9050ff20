import { ATTENTION_GEMM_MIN_ROWS, causalAttention, type AttentionShape } from '../attention';
import { KvCache, type ForwardOptions, type ModelConfig } from '../model';
import { indexSafetensors, rawToFloat32, type RawTensor } from '../safetensors';
import { defaultHeap, type Half, type WasmHeap } from '../wasm/heap';
import { parseHfConfig, ropeInvFreq, type HfModelConfig } from './config';
import type { LoraAdapter, LoraWeights } from './lora';

/**
 * A Hugging Face Llama-family causal LM (Llama 3.x, Qwen2.5, Qwen3, SmolLM2) on the engine's kernels:
 * weights as stored (bf16 / f16 stay 16-bit in memory and are widened inside the kernels; f32 stays f32),
 * compute in f32. Optional pieces are driven by the tensors present: q/k/v/o biases (Qwen2.5), per-head
 * q/k RMSNorm (Qwen3), a separate lm_head (untied). Same calling convention as the engine's `Model`, so
 * `generate()` and the inference scheduler run it unchanged; LoRA adapters ride on the KV cache
 * (`newCache(capacity, adapter)`), so sequences of different checkpoints share one batch and one copy of
 * the base weights.
 */

type Weight =
  | { kind: 'f32'; ptr: number; rows: number; cols: number; packed?: number }
  | { kind: Half; ptr: number; rows: number; cols: number };

interface Layer {
  inputNorm: number;
  postNorm: number;
  q: Weight;
  k: Weight;
  v: Weight;
  o: Weight;
  gate: Weight;
  up: Weight;
  down: Weight;
  qBias: number | null;
  kBias: number | null;
  vBias: number | null;
  oBias: number | null;
  qNorm: number | null;
  kNorm: number | null;
}

export type LoraModule = 'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down';
export const LORA_MODULES: readonly LoraModule[] = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'];

export interface HfLoadOptions {
  heap?: WasmHeap;
  /** Cap on positions (RoPE tables and cache capacity); default max_position_embeddings. */
  maxContext?: number;
}

/** Rows at or above which a 16-bit product widens weight blocks for the packed matmul instead of the GEMV. */
const HALF_GEMM_MIN_ROWS = 12;
/** Weight rows widened per block on that path (× K floats of scratch). */
const HALF_BLOCK_ROWS = 128;

/** A KV cache that remembers which adapter (if any) its sequence runs with; clones keep it. */
export class HfKvCache extends KvCache {
  constructor(
    heap: WasmHeap,
    layout: Readonly<ModelConfig>,
    capacity: number,
    readonly owner: HfModel,
    readonly adapter: LoraAdapter | null,
  ) {
    super(heap, layout, capacity);
  }

  override clone(capacity = this.capacity): KvCache {
    if (capacity < this.length) throw new RangeError('clone capacity is smaller than the cached length');
    const copy = new HfKvCache(this.heap, this.config, capacity, this.owner, this.adapter);
    const n = this.length * this.config.d_model;
    const f = this.heap.f32;
    for (let l = 0; l < this.config.n_layers; l++) {
      f.copyWithin(copy.k[l], this.k[l], this.k[l] + n);
      f.copyWithin(copy.v[l], this.v[l], this.v[l] + n);
    }
    copy.length = this.length;
    return copy;
  }
}

export interface HfForwardInput {
  tokens: ArrayLike<number>;
  cache?: KvCache;
}

export class HfModel {
  readonly hf: HfModelConfig;
  /** The subset generate() and the scheduler read (ctx, vocab), in the engine's ModelConfig shape. */
  readonly config: ModelConfig;
  readonly heap: WasmHeap;
  /** Storage dtype of the projection weights. */
  readonly weightDtype: 'f32' | Half;
  private readonly layers: Layer[] = [];
  private readonly embed: Weight;
  private readonly lmHead: Weight;
  private readonly finalNorm: number;
  private readonly ropeCos: Float32Array;
  private readonly ropeSin: Float32Array;
  // The KV cache only needs a layout: one "head" of kvHeads·headDim floats per position and layer.
  private readonly kvLayout: ModelConfig;
  private readonly allocations: number[] = [];
  private released = false;
  private widenScratch = { ptr: 0, size: 0 };

  private constructor(hf: HfModelConfig, tensors: Map<string, RawTensor>, options: HfLoadOptions) {
    this.hf = hf;
    this.heap = options.heap ?? defaultHeap();
    const ctx = Math.min(hf.ctx, options.maxContext ?? hf.ctx);
    this.config = {
      vocab: hf.vocab,
      d_model: hf.hidden,
      n_layers: hf.layers,
      n_heads: hf.heads,
      n_kv_heads: hf.kvHeads,
      d_ff: hf.intermediate,
      ctx,
      rope_theta: hf.ropeTheta,
      norm_eps: hf.normEps,
      tie_embeddings: hf.tieEmbeddings,
    };
    this.kvLayout = { ...this.config, n_heads: 1, n_kv_heads: 1, d_model: hf.kvHeads * hf.headDim };
    const take = (name: string): RawTensor => {
      const t = tensors.get(name);
      if (!t) throw new Error(`missing tensor ${name}`);
      return t;
    };
    const h = hf.hidden;
    const qDim = hf.heads * hf.headDim;
    const kvDim = hf.kvHeads * hf.headDim;
    try {
      this.embed = this.weight(take('model.embed_tokens.weight'), 'model.embed_tokens.weight', hf.vocab, h);
      this.weightDtype = this.embed.kind;
      for (let l = 0; l < hf.layers; l++) {
        const p = `model.layers.${l}`;
        const lin = (name: string, rows: number, cols: number) =>
          this.weight(take(`${p}.${name}.weight`), `${p}.${name}.weight`, rows, cols);
        const vec = (name: string, n: number, required: boolean): number | null => {
          const t = tensors.get(`${p}.${name}`);
          if (!t) {
            if (required) throw new Error(`missing tensor ${p}.${name}`);
            return null;
          }
          return this.vector(t, `${p}.${name}`, n);
        };
        this.layers.push({
          inputNorm: vec('input_layernorm.weight', h, true)!,
          postNorm: vec('post_attention_layernorm.weight', h, true)!,
          q: lin('self_attn.q_proj', qDim, h),
          k: lin('self_attn.k_proj', kvDim, h),
          v: lin('self_attn.v_proj', kvDim, h),
          o: lin('self_attn.o_proj', h, qDim),
          gate: lin('mlp.gate_proj', hf.intermediate, h),
          up: lin('mlp.up_proj', hf.intermediate, h),
          down: lin('mlp.down_proj', h, hf.intermediate),
          qBias: vec('self_attn.q_proj.bias', qDim, false),
          kBias: vec('self_attn.k_proj.bias', kvDim, false),
          vBias: vec('self_attn.v_proj.bias', kvDim, false),
          oBias: vec('self_attn.o_proj.bias', h, false),
          qNorm: vec('self_attn.q_norm.weight', hf.headDim, hf.modelType === 'qwen3'),
          kNorm: vec('self_attn.k_norm.weight', hf.headDim, hf.modelType === 'qwen3'),
        });
      }
      this.finalNorm = this.vector(take('model.norm.weight'), 'model.norm.weight', h);
      const head = tensors.get('lm_head.weight');
      if (hf.tieEmbeddings || !head) {
        if (!hf.tieEmbeddings) throw new Error('missing tensor lm_head.weight (tie_word_embeddings is false)');
        this.lmHead = this.embed;
      } else this.lmHead = this.weight(head, 'lm_head.weight', hf.vocab, h);
    } catch (err) {
      this.release();
      throw err;
    }
    const inv = ropeInvFreq(hf);
    const half = hf.headDim / 2;
    this.ropeCos = new Float32Array(ctx * half);
    this.ropeSin = new Float32Array(ctx * half);
    for (let p = 0; p < ctx; p++) {
      for (let i = 0; i < half; i++) {
        // float32 angle as transformers forms it (inv_freq · position in f32), then cos/sin rounded to f32.
        const angle = Math.fround(inv[i] * p);
        this.ropeCos[p * half + i] = Math.cos(angle);
        this.ropeSin[p * half + i] = Math.sin(angle);
      }
    }
  }

  /**
   * Loads a model from config.json's parsed value and the bytes of its safetensors file(s) (a sharded
   * checkpoint passes every shard). Reading the files is the caller's job.
   */
  static load(configJson: unknown, safetensors: readonly Uint8Array[], options: HfLoadOptions = {}): HfModel {
    const hf = parseHfConfig(configJson);
    const tensors = new Map<string, RawTensor>();
    for (const bytes of safetensors) {
      for (const [name, t] of indexSafetensors(bytes).tensors) {
        if (tensors.has(name)) throw new Error(`tensor ${name} appears in two safetensors files`);
        tensors.set(name, t);
      }
    }
    return new HfModel(hf, tensors, options);
  }

  /** Bytes the weights occupy in the heap (16-bit weights at 2 bytes each). */
  get weightBytes(): number {
    let n = 0;
    const add = (w: Weight) => (n += w.rows * w.cols * (w.kind === 'f32' ? 4 : 2));
    add(this.embed);
    if (this.lmHead !== this.embed) add(this.lmHead);
    for (const l of this.layers) for (const w of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) add(w);
    return n;
  }

  /** Shape of a projection, for adapters: [out, in]. */
  projectionShape(layer: number, module: LoraModule): [number, number] {
    const w = this.layers[layer]?.[module];
    if (!w) throw new Error(`no layer ${layer}`);
    return [w.rows, w.cols];
  }

  /** The output head as stored (the embedding when tied), for adapters: a view of the heap, valid until its next allocation. */
  outputHead(): RawTensor {
    const w = this.lmHead;
    const dtype = w.kind === 'f32' ? 'F32' : w.kind === 'bf16' ? 'BF16' : 'F16';
    const bytes = w.rows * w.cols * (w.kind === 'f32' ? 4 : 2);
    return { dtype, shape: [w.rows, w.cols], bytes: new Uint8Array(this.heap.f32.buffer, w.ptr * 4, bytes) };
  }

  newCache(capacity = this.config.ctx, adapter: LoraAdapter | null = null): HfKvCache {
    if (adapter && adapter.base !== this) throw new Error('adapter was loaded for another model');
    return new HfKvCache(this.heap, this.kvLayout, capacity, this, adapter);
  }

  /** One decode step for B sequences (one token each): [B × vocab] logits. */
  decodeStep(caches: KvCache[], tokens: ArrayLike<number>): Float32Array {
    const rows = this.forward(caches.map((cache, i) => ({ cache, tokens: [tokens[i]] })));
    const out = new Float32Array(rows.length * this.config.vocab);
    rows.forEach((r, i) => out.set(r, i * this.config.vocab));
    return out;
  }

  /**
   * New tokens of several sequences in one pass (any mix of prefill and decode); each sequence's adapter
   * comes from its cache. Returns the last position's logits per input, or every new position's with
   * `allLogits`.
   */
  forward(inputs: HfForwardInput[], options: ForwardOptions = {}): Float32Array[] {
    if (this.released) throw new Error('model was released');
    const c = this.hf;
    const hd = c.headDim;
    const qDim = c.heads * hd;
    const kvDim = c.kvHeads * hd;
    const qkvW = qDim + 2 * kvDim;
    const d = c.hidden;
    const dff = c.intermediate;
    const heap = this.heap;
    const V = c.vocab;

    const caches: HfKvCache[] = [];
    const temporary: HfKvCache[] = [];
    const rowStart: number[] = [];
    let M = 0;
    for (const input of inputs) {
      const n = input.tokens.length;
      if (n === 0) throw new Error('forward: every input needs at least one token');
      for (let i = 0; i < n; i++) {
        const t = input.tokens[i];
        if (!Number.isInteger(t) || t < 0 || t >= V)
          throw new RangeError(`token id ${t} is outside the vocabulary (${V})`);
      }
      let cache = input.cache;
      if (cache && !(cache instanceof HfKvCache && cache.owner === this)) {
        throw new Error('forward: kv cache belongs to another model');
      }
      if (cache && caches.includes(cache as HfKvCache))
        throw new Error('forward: the same kv cache appears twice in one batch');
      if (!cache) {
        if (n > this.config.ctx)
          throw new RangeError(`sequence of ${n} tokens exceeds the context of ${this.config.ctx}`);
        cache = this.newCache(n);
        temporary.push(cache as HfKvCache);
      } else if (cache.length + n > cache.capacity) {
        throw new RangeError(`kv cache full: ${cache.length} + ${n} tokens exceed its capacity of ${cache.capacity}`);
      }
      caches.push(cache as HfKvCache);
      rowStart.push(M);
      M += n;
    }
    // Runs of consecutive inputs that share an adapter: one low-rank product per run and projection.
    const runs: Array<{ adapter: LoraAdapter; row0: number; rows: number }> = [];
    inputs.forEach((input, s) => {
      const a = caches[s].adapter;
      if (!a) return;
      if (a.isReleased) throw new Error("forward: the sequence's adapter was released");
      const last = runs[runs.length - 1];
      if (last && last.adapter === a && last.row0 + last.rows === rowStart[s]) last.rows += input.tokens.length;
      else runs.push({ adapter: a, row0: rowStart[s], rows: input.tokens.length });
    });
    const maxRank = runs.reduce((r, x) => Math.max(r, x.adapter.maxRank), 0);

    const x = heap.alloc(M * d);
    const xn = heap.alloc(M * Math.max(d, qDim));
    const qkv = heap.alloc(M * qkvW);
    const att = heap.alloc(M * qDim);
    const gu = heap.alloc(M * 2 * dff);
    const loraTmp = heap.alloc(Math.max(1, M * maxRank));
    let maxScores = 0;
    inputs.forEach((input, s) => {
      const n = input.tokens.length;
      if (n >= ATTENTION_GEMM_MIN_ROWS) maxScores = Math.max(maxScores, n * (caches[s].length + n));
    });
    const scores = heap.alloc(Math.max(maxScores, this.config.ctx));

    /** out[rows × N] += (in·Aᵀ)·(scale·B)ᵀ, through loraTmp [rows × r]. */
    const addLowRank = (
      lw: LoraWeights,
      rows: number,
      K: number,
      N: number,
      input: number,
      ldIn: number,
      out: number,
      ldOut: number,
    ) => {
      heap.gemmPacked(rows, lw.rank, K, input, ldIn, 1, lw.aPacked, loraTmp, lw.rank);
      heap.gemmPacked(rows, N, lw.rank, loraTmp, lw.rank, 1, lw.bPacked, out, ldOut, true);
    };
    const project = (
      layer: number,
      module: LoraModule,
      w: Weight,
      input: number,
      ldIn: number,
      out: number,
      ldOut: number,
      col0: number,
      accumulate: boolean,
    ) => {
      this.linear(w, input, M, ldIn, out, ldOut, col0, accumulate);
      for (const run of runs) {
        const lw = run.adapter.weights(layer, module);
        if (lw)
          addLowRank(lw, run.rows, w.cols, w.rows, input + run.row0 * ldIn, ldIn, out + run.row0 * ldOut + col0, ldOut);
      }
    };
    const addBias = (buf: number, ld: number, col0: number, bias: number | null, n: number) => {
      if (bias === null) return;
      const f = heap.f32;
      for (let r = 0; r < M; r++) {
        const o = buf + r * ld + col0;
        for (let i = 0; i < n; i++) f[o + i] += f[bias + i];
      }
    };

    try {
      this.embedRows(inputs, x);
      for (let l = 0; l < c.layers; l++) {
        const L = this.layers[l];
        heap.rmsNormRows(x, xn, M, d, L.inputNorm, c.normEps);
        project(l, 'q', L.q, xn, d, qkv, qkvW, 0, false);
        project(l, 'k', L.k, xn, d, qkv, qkvW, qDim, false);
        project(l, 'v', L.v, xn, d, qkv, qkvW, qDim + kvDim, false);
        addBias(qkv, qkvW, 0, L.qBias, qDim);
        addBias(qkv, qkvW, qDim, L.kBias, kvDim);
        addBias(qkv, qkvW, qDim + kvDim, L.vBias, kvDim);
        if (L.qNorm !== null && L.kNorm !== null) {
          for (let r = 0; r < M; r++) {
            const row = qkv + r * qkvW;
            heap.rmsNormRows(row, row, c.heads, hd, L.qNorm, c.normEps);
            heap.rmsNormRows(row + qDim, row + qDim, c.kvHeads, hd, L.kNorm, c.normEps);
          }
        }
        inputs.forEach((input, s) => {
          const n = input.tokens.length;
          const cache = caches[s];
          const row0 = rowStart[s];
          this.applyRope(qkv, qkvW, row0, n, cache.length, 0, c.heads);
          this.applyRope(qkv, qkvW, row0, n, cache.length, qDim, c.kvHeads);
          const f = heap.f32;
          for (let t = 0; t < n; t++) {
            const src = qkv + (row0 + t) * qkvW + qDim;
            const dst = (cache.length + t) * kvDim;
            f.copyWithin(cache.k[l] + dst, src, src + kvDim);
            f.copyWithin(cache.v[l] + dst, src + kvDim, src + 2 * kvDim);
          }
          // Causal attention of this sequence's n new rows against its cache (attention.ts).
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
        project(l, 'o', L.o, att, qDim, x, d, 0, true);
        addBias(x, d, 0, L.oBias, d);
        heap.rmsNormRows(x, xn, M, d, L.postNorm, c.normEps);
        project(l, 'gate', L.gate, xn, d, gu, 2 * dff, 0, false);
        project(l, 'up', L.up, xn, d, gu, 2 * dff, dff, false);
        heap.swigluRows(gu, M, dff, 2 * dff, dff);
        project(l, 'down', L.down, gu, 2 * dff, x, d, 0, true);
      }

      const outRows: number[] = [];
      // Logit rows of sequences whose adapter adapts the output head, in runs of consecutive ones that share
      // an adapter (one low-rank product per run, as for the projections).
      const headRuns: Array<{ lw: LoraWeights; row0: number; rows: number }> = [];
      inputs.forEach((input, s) => {
        const n = input.tokens.length;
        const row0 = outRows.length;
        if (options.allLogits) for (let t = 0; t < n; t++) outRows.push(rowStart[s] + t);
        else outRows.push(rowStart[s] + n - 1);
        const lw = caches[s].adapter?.head;
        if (!lw) return;
        const last = headRuns[headRuns.length - 1];
        if (last?.lw === lw && last.row0 + last.rows === row0) last.rows = outRows.length - last.row0;
        else headRuns.push({ lw, row0, rows: outRows.length - row0 });
      });
      const R = outRows.length;
      {
        const f = heap.f32;
        outRows.forEach((r, i) => f.copyWithin(xn + i * d, x + r * d, x + r * d + d));
      }
      heap.rmsNormRows(xn, xn, R, d, this.finalNorm, c.normEps);
      const logits = heap.alloc(R * V);
      try {
        this.linear(this.lmHead, xn, R, d, logits, V, 0, false);
        // PEFT's lm_head LoRA: logits += (h·Aᵀ)·(scale·B)ᵀ on the final-normed rows; with tied embeddings
        // only here (the input embedding stays the base's). Other rows keep the base head's logits untouched.
        for (const run of headRuns) addLowRank(run.lw, run.rows, d, V, xn + run.row0 * d, d, logits + run.row0 * V, V);
        const f = heap.f32;
        const out: Float32Array[] = [];
        let r = 0;
        for (const input of inputs) {
          const rows = options.allLogits ? input.tokens.length : 1;
          out.push(f.slice(logits + r * V, logits + (r + rows) * V));
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
      for (const ptr of [scores, loraTmp, gu, att, qkv, xn, x]) heap.release(ptr);
      for (const cache of temporary) cache.release();
    }
  }

  /** Frees the weights (adapters and caches are released by their owners). */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const ptr of this.allocations) this.heap.release(ptr);
    this.allocations.length = 0;
    if (this.widenScratch.size > 0) this.heap.release(this.widenScratch.ptr);
    this.widenScratch = { ptr: 0, size: 0 };
  }

  get isReleased(): boolean {
    return this.released;
  }

  private weight(t: RawTensor, name: string, rows: number, cols: number): Weight {
    if (t.shape.length !== 2 || t.shape[0] !== rows || t.shape[1] !== cols) {
      throw new Error(`tensor ${name}: shape [${t.shape}] where [${rows}, ${cols}] was expected`);
    }
    if (t.dtype === 'BF16' || t.dtype === 'F16') {
      const ptr = this.heap.uploadBytes(t.bytes);
      this.allocations.push(ptr);
      return { kind: t.dtype === 'BF16' ? 'bf16' : 'f16', ptr, rows, cols };
    }
    const ptr = this.heap.upload(rawToFloat32(t));
    this.allocations.push(ptr);
    return { kind: 'f32', ptr, rows, cols };
  }

  private vector(t: RawTensor, name: string, n: number): number {
    if (t.shape.length !== 1 || t.shape[0] !== n)
      throw new Error(`tensor ${name}: shape [${t.shape}] where [${n}] was expected`);
    const ptr = this.heap.upload(rawToFloat32(t));
    this.allocations.push(ptr);
    return ptr;
  }

  /** out[:, col0 : col0+N] (+)= in[M × K] · Wᵀ, W = [N × K] as stored. */
  private linear(
    w: Weight,
    input: number,
    M: number,
    ldIn: number,
    out: number,
    ldOut: number,
    col0: number,
    accumulate: boolean,
  ): void {
    const heap = this.heap;
    const N = w.rows;
    const K = w.cols;
    if (w.kind === 'f32') {
      if (w.packed === undefined) {
        w.packed = heap.alloc(heap.packedBFloats(K, N));
        this.allocations.push(w.packed);
        heap.packB(K, N, w.ptr, 1, K, w.packed);
      }
      heap.gemmPacked(M, N, K, input, ldIn, 1, w.packed, out + col0, ldOut, accumulate);
      return;
    }
    if (M < HALF_GEMM_MIN_ROWS || K % 2 !== 0) {
      heap.gemv16(M, N, K, input, ldIn, w.ptr, w.kind, out + col0, ldOut, accumulate);
      return;
    }
    // Many rows (prefill): widen a block of weight rows to f32 and run the packed matmul on it; the
    // widening is O(N·K) against the product's O(M·N·K).
    const need = HALF_BLOCK_ROWS * K;
    if (this.widenScratch.size < need) {
      if (this.widenScratch.size > 0) heap.release(this.widenScratch.ptr);
      this.widenScratch = { ptr: heap.alloc(need), size: need };
    }
    const scratch = this.widenScratch.ptr;
    for (let j0 = 0; j0 < N; j0 += HALF_BLOCK_ROWS) {
      const nb = Math.min(HALF_BLOCK_ROWS, N - j0);
      // Rows start at element j0·K; K is even, so that is a whole float index.
      heap.widen16(w.ptr + (j0 * K) / 2, scratch, nb * K, w.kind);
      heap.gemm(M, nb, K, input, ldIn, 1, scratch, 1, K, out + col0 + j0, ldOut, accumulate);
    }
  }

  private embedRows(inputs: HfForwardInput[], x: number): void {
    const d = this.hf.hidden;
    const w = this.embed;
    let r = 0;
    for (const input of inputs) {
      for (let i = 0; i < input.tokens.length; i++, r++) {
        const t = input.tokens[i];
        if (w.kind === 'f32') {
          const f = this.heap.f32;
          f.copyWithin(x + r * d, w.ptr + t * d, w.ptr + t * d + d);
        } else if (d % 2 === 0) {
          this.heap.widen16(w.ptr + (t * d) / 2, x + r * d, d, w.kind);
        } else {
          throw new Error('hidden_size must be even for 16-bit embeddings');
        }
      }
    }
  }

  /** HF rotate_half RoPE on `heads` heads from column col0 of n rows at positions pos0…. */
  private applyRope(buf: number, ld: number, row0: number, n: number, pos0: number, col0: number, heads: number): void {
    const f = this.heap.f32;
    const hd = this.hf.headDim;
    const half = hd / 2;
    const cosT = this.ropeCos;
    const sinT = this.ropeSin;
    for (let t = 0; t < n; t++) {
      const tab = (pos0 + t) * half;
      for (let h = 0; h < heads; h++) {
        const base = buf + (row0 + t) * ld + col0 + h * hd;
        for (let i = 0; i < half; i++) {
          const cos = cosT[tab + i];
          const sin = sinT[tab + i];
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
    const c = this.hf;
    return (this.shapeCache ??= { heads: c.heads, kvHeads: c.kvHeads, headDim: c.headDim });
  }
}
