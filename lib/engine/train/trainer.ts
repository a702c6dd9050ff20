import { headDim, ropeTables, type Model, type ModelConfig } from '../model';
import type { WasmHeap } from '../wasm/heap';

/**
 * The training half of the engine: a forward pass over a batch of whole sequences (causal mask, no KV
 * cache) that keeps every activation, and the matching backward pass through every layer into per-tensor
 * gradient buffers on the model's heap. Losses are not built in: the forward returns, for each position
 * t < n−1, the log-probability of token t+1 and the entropy of the next-token distribution; the caller
 * turns them into dL/dlogprob (SFT cross-entropy, RL PPO/CISPO), and `backward` does the rest. Every loss
 * this engine needs is a function of the target logprobs only, so this one seam serves all of them.
 *
 * All matrix products go through the wasm SIMD kernels (weights are packed per call: they change every
 * step); elementwise work (norm, RoPE, SwiGLU and softmax derivatives) runs in the new backward kernels.
 */

export interface SequenceScores {
  /** logprobs[t] = log p(token t+1 | tokens ≤ t), t = 0 … n−2. */
  logprobs: Float32Array;
  /** entropy[t] of the same next-token distribution. */
  entropy: Float32Array;
  /** With `argmax`: 1 where token t+1 is the most likely next token (ties count), else 0. */
  argmax?: Uint8Array;
}

interface LayerActs {
  xIn: number; // residual stream entering the layer [M × d]
  xn1: number; // input_layernorm output [M × d]
  qkv: number; // q | k | v after RoPE [M × qkvW]
  probs: number; // attention probabilities, per sequence per head [n × n] blocks
  att: number; // attention output [M × qDim]
  xMid: number; // residual after attention [M × d]
  xn2: number; // post_attention_layernorm output [M × d]
  gu: number; // gate | up pre-activations [M × 2·d_ff]
  h: number; // silu(gate)·up [M × d_ff]
}

interface Pass {
  sequences: number[][];
  rowStart: number[];
  probOffset: number[];
  M: number;
  layers: LayerActs[];
  xFinal: number;
  xnf: number;
  /** softmax(logits) for every row [M × vocab]. */
  softmax: number;
}

const LAYER_KEYS = ['xIn', 'xn1', 'qkv', 'probs', 'att', 'xMid', 'xn2', 'gu', 'h'] as const;

export class Trainer {
  readonly model: Model;
  readonly heap: WasmHeap;
  readonly config: ModelConfig;
  /** One gradient buffer per parameter, same order and shape as the model's tensors. */
  readonly grads = new Map<string, { ptr: number; size: number }>();
  private pass: Pass | null = null;
  private readonly ropeCos: Float32Array;
  private readonly ropeSin: Float32Array;
  private released = false;

  constructor(model: Model) {
    this.model = model;
    this.heap = model.heap;
    this.config = model.config;
    for (const name of model.tensorNames()) {
      const { size } = model.parameterLocation(name);
      this.grads.set(name, { ptr: this.heap.alloc(size, true), size });
    }
    // The very table Model's forward uses, so training and inference rotate identically.
    ({ cos: this.ropeCos, sin: this.ropeSin } = ropeTables(this.config));
  }

  zeroGrad(): void {
    const f = this.heap.f32;
    for (const g of this.grads.values()) f.fill(0, g.ptr, g.ptr + g.size);
  }

  /** A copy of one gradient (tests, diagnostics). */
  gradient(name: string): Float32Array {
    const g = this.grads.get(name);
    if (!g) throw new Error(`unknown tensor ${name}`);
    return this.heap.f32.slice(g.ptr, g.ptr + g.size);
  }

  /** √(Σ g²) over every parameter (docs/contract.md §5.6, §3.2 clip on this global norm). */
  gradNorm(): number {
    let total = 0;
    for (const g of this.grads.values()) total += this.heap.sumSquares(g.ptr, g.size);
    return Math.sqrt(total);
  }

  /**
   * Forward over whole sequences (each from position 0, causal). With `keepActivations` the pass is kept
   * for one `backward` call; otherwise it only scores (old logprobs, evaluation).
   */
  forward(
    sequences: ReadonlyArray<ArrayLike<number>>,
    options: { keepActivations?: boolean; argmax?: boolean } = {},
  ): SequenceScores[] {
    if (this.released) throw new Error('trainer was released');
    this.dropPass();
    const c = this.config;
    const heap = this.heap;
    const hd = headDim(c);
    const qDim = c.n_heads * hd;
    const kvDim = c.n_kv_heads * hd;
    const qkvW = qDim + 2 * kvDim;
    const d = c.d_model;
    const V = c.vocab;

    const seqs: number[][] = [];
    const rowStart: number[] = [];
    const probOffset: number[] = [];
    let M = 0;
    let P = 0;
    for (const s of sequences) {
      const n = s.length;
      if (n < 2) throw new Error('training sequences need at least two tokens');
      if (n > c.ctx) throw new RangeError(`sequence of ${n} tokens exceeds the context of ${c.ctx}`);
      const arr = Array.from(s);
      for (const t of arr) {
        if (!Number.isInteger(t) || t < 0 || t >= V)
          throw new RangeError(`token id ${t} is outside the vocabulary (${V})`);
      }
      seqs.push(arr);
      rowStart.push(M);
      probOffset.push(P);
      M += n;
      P += c.n_heads * n * n;
    }
    if (seqs.length === 0) return [];

    const layers: LayerActs[] = [];
    for (let l = 0; l < c.n_layers; l++) {
      layers.push({
        xIn: heap.alloc(M * d),
        xn1: heap.alloc(M * d),
        qkv: heap.alloc(M * qkvW),
        probs: heap.alloc(P),
        att: heap.alloc(M * qDim),
        xMid: heap.alloc(M * d),
        xn2: heap.alloc(M * d),
        gu: heap.alloc(M * 2 * c.d_ff),
        h: heap.alloc(M * c.d_ff),
      });
    }
    const pass: Pass = {
      sequences: seqs,
      rowStart,
      probOffset,
      M,
      layers,
      xFinal: heap.alloc(M * d),
      xnf: heap.alloc(M * d),
      softmax: heap.alloc(M * V),
    };
    this.pass = pass;

    try {
      // Embedding gather into the first layer's input.
      {
        const f = heap.f32;
        const table = this.w('model.embed_tokens.weight');
        const x0 = c.n_layers > 0 ? layers[0].xIn : pass.xFinal;
        let r = 0;
        for (const s of seqs) for (const t of s) f.copyWithin(x0 + r++ * d, table + t * d, table + t * d + d);
      }
      for (let l = 0; l < c.n_layers; l++) {
        const a = layers[l];
        const p = `model.layers.${l}`;
        heap.rmsNormRows(a.xIn, a.xn1, M, d, this.w(`${p}.input_layernorm.weight`), c.norm_eps);
        this.linear(a.xn1, M, d, `${p}.self_attn.q_proj.weight`, a.qkv, qkvW);
        this.linear(a.xn1, M, d, `${p}.self_attn.k_proj.weight`, a.qkv + qDim, qkvW);
        this.linear(a.xn1, M, d, `${p}.self_attn.v_proj.weight`, a.qkv + qDim + kvDim, qkvW);
        seqs.forEach((s, si) => {
          const n = s.length;
          const row0 = rowStart[si];
          this.rope(a.qkv, qkvW, row0, n, 0, c.n_heads, false);
          this.rope(a.qkv, qkvW, row0, n, qDim, c.n_kv_heads, false);
          const group = c.n_heads / c.n_kv_heads;
          const scale = 1 / Math.sqrt(hd);
          for (let h = 0; h < c.n_heads; h++) {
            const g = Math.floor(h / group);
            const q0 = a.qkv + row0 * qkvW + h * hd;
            const k0 = a.qkv + row0 * qkvW + qDim + g * hd;
            const v0 = k0 + kvDim;
            const pr = a.probs + probOffset[si] + h * n * n;
            heap.gemm(n, n, hd, q0, qkvW, 1, k0, 1, qkvW, pr, n);
            heap.softmaxCausalRows(pr, n, n, 1, scale);
            heap.gemm(n, hd, n, pr, n, 1, v0, qkvW, 1, a.att + row0 * qDim + h * hd, qDim);
          }
        });
        const f = heap.f32;
        f.copyWithin(a.xMid, a.xIn, a.xIn + M * d);
        this.linear(a.att, M, qDim, `${p}.self_attn.o_proj.weight`, a.xMid, d, true);
        heap.rmsNormRows(a.xMid, a.xn2, M, d, this.w(`${p}.post_attention_layernorm.weight`), c.norm_eps);
        this.linear(a.xn2, M, d, `${p}.mlp.gate_proj.weight`, a.gu, 2 * c.d_ff);
        this.linear(a.xn2, M, d, `${p}.mlp.up_proj.weight`, a.gu + c.d_ff, 2 * c.d_ff);
        heap.swigluForward(a.gu, a.h, M, c.d_ff);
        const next = l + 1 < c.n_layers ? layers[l + 1].xIn : pass.xFinal;
        heap.f32.copyWithin(next, a.xMid, a.xMid + M * d);
        this.linear(a.h, M, c.d_ff, `${p}.mlp.down_proj.weight`, next, d, true);
      }
      heap.rmsNormRows(pass.xFinal, pass.xnf, M, d, this.w('model.norm.weight'), c.norm_eps);
      this.linear(pass.xnf, M, d, this.headName(), pass.softmax, V);

      // Target logits are read before the rows become probabilities, so logprob = logit − logsumexp stays
      // exact even where the probability underflows.
      const targetLogits = seqs.map((s, si) => {
        const f = heap.f32;
        const out = new Float32Array(s.length - 1);
        for (let t = 0; t < s.length - 1; t++) out[t] = f[pass.softmax + (rowStart[si] + t) * V + s[t + 1]];
        return out;
      });
      // Token accuracy (SFT validation) needs the row maximum, read from the logits for the same reason.
      const argmax = options.argmax
        ? seqs.map((s, si) => {
            const f = heap.f32;
            const hit = new Uint8Array(s.length - 1);
            for (let t = 0; t < s.length - 1; t++) {
              const row = pass.softmax + (rowStart[si] + t) * V;
              const target = targetLogits[si][t];
              let v = 0;
              while (v < V && f[row + v] <= target) v++;
              hit[t] = v === V ? 1 : 0;
            }
            return hit;
          })
        : null;
      const scores: SequenceScores[] = [];
      const stats = heap.alloc(2 * M);
      try {
        heap.softmaxStatsRows(pass.softmax, M, V, stats);
        const f = heap.f32;
        seqs.forEach((s, si) => {
          const n = s.length;
          const logprobs = new Float32Array(n - 1);
          const entropy = new Float32Array(n - 1);
          for (let t = 0; t < n - 1; t++) {
            const r = rowStart[si] + t;
            logprobs[t] = targetLogits[si][t] - f[stats + 2 * r];
            entropy[t] = f[stats + 2 * r + 1];
          }
          scores.push(argmax ? { logprobs, entropy, argmax: argmax[si] } : { logprobs, entropy });
        });
      } finally {
        heap.release(stats);
      }
      if (!options.keepActivations) this.dropPass();
      return scores;
    } catch (err) {
      this.dropPass();
      throw err;
    }
  }

  /**
   * Accumulates into the gradients dL/dθ for the last kept forward, given dL/dlogprobs[s][t] for each
   * sequence (same shape as the forward's logprobs). Frees the activations.
   */
  backward(dLogprobs: ReadonlyArray<ArrayLike<number>>): void {
    const pass = this.pass;
    if (!pass) throw new Error('backward needs a forward with keepActivations');
    if (dLogprobs.length !== pass.sequences.length) throw new Error('backward: one gradient row per sequence');
    const c = this.config;
    const heap = this.heap;
    const hd = headDim(c);
    const qDim = c.n_heads * hd;
    const kvDim = c.n_kv_heads * hd;
    const qkvW = qDim + 2 * kvDim;
    const d = c.d_model;
    const V = c.vocab;
    const M = pass.M;
    const { sequences: seqs, rowStart } = pass;

    let maxN = 0;
    for (const s of seqs) maxN = Math.max(maxN, s.length);
    const dx = heap.alloc(M * d);
    const dxn = heap.alloc(M * d);
    const dbig = heap.alloc(M * Math.max(2 * c.d_ff, qkvW, V));
    const dh = heap.alloc(M * c.d_ff);
    const datt = heap.alloc(M * qDim);
    const dP = heap.alloc(maxN * maxN);
    try {
      // dL/dlogits = g·(onehot(target) − softmax), g = dL/dlogprob; rows without a target get 0.
      {
        const f = heap.f32;
        const dl = dbig;
        seqs.forEach((s, si) => {
          const n = s.length;
          const g = dLogprobs[si];
          if (g.length !== n - 1) throw new Error('backward: gradient row length must be n − 1');
          for (let t = 0; t < n; t++) {
            const r = rowStart[si] + t;
            const row = dl + r * V;
            if (t === n - 1 || g[t] === 0) {
              f.fill(0, row, row + V);
              continue;
            }
            const gt = g[t];
            const src = pass.softmax + r * V;
            for (let j = 0; j < V; j++) f[row + j] = -gt * f[src + j];
            f[row + s[t + 1]] += gt;
          }
        });
      }
      const head = this.headName();
      // lm_head: dxnf = dlogits·W, dW += dlogitsᵀ·xnf.
      heap.gemm(M, d, V, dbig, V, 1, this.w(head), d, 1, dxn, d);
      heap.gemm(V, d, M, dbig, 1, V, pass.xnf, d, 1, this.g(head), d, true);
      heap.f32.fill(0, dx, dx + M * d);
      heap.rmsNormBackward(
        pass.xFinal,
        dxn,
        dx,
        M,
        d,
        this.w('model.norm.weight'),
        this.g('model.norm.weight'),
        c.norm_eps,
      );

      for (let l = c.n_layers - 1; l >= 0; l--) {
        const a = pass.layers[l];
        const p = `model.layers.${l}`;
        // MLP: x_out = x_mid + down(silu(gate(xn2))·up(xn2)); dx carries d x_out and becomes d x_mid.
        const down = `${p}.mlp.down_proj.weight`;
        heap.gemm(M, c.d_ff, d, dx, d, 1, this.w(down), c.d_ff, 1, dh, c.d_ff);
        heap.gemm(d, c.d_ff, M, dx, 1, d, a.h, c.d_ff, 1, this.g(down), c.d_ff, true);
        const dgu = dbig;
        heap.swigluBackward(a.gu, dh, dgu, M, c.d_ff);
        const gate = `${p}.mlp.gate_proj.weight`;
        const up = `${p}.mlp.up_proj.weight`;
        heap.gemm(M, d, c.d_ff, dgu, 2 * c.d_ff, 1, this.w(gate), d, 1, dxn, d);
        heap.gemm(M, d, c.d_ff, dgu + c.d_ff, 2 * c.d_ff, 1, this.w(up), d, 1, dxn, d, true);
        heap.gemm(c.d_ff, d, M, dgu, 1, 2 * c.d_ff, a.xn2, d, 1, this.g(gate), d, true);
        heap.gemm(c.d_ff, d, M, dgu + c.d_ff, 1, 2 * c.d_ff, a.xn2, d, 1, this.g(up), d, true);
        const post = `${p}.post_attention_layernorm.weight`;
        heap.rmsNormBackward(a.xMid, dxn, dx, M, d, this.w(post), this.g(post), c.norm_eps);

        // Attention: x_mid = x_in + o_proj(attn(rope(q), rope(k), v)); dx now holds d x_mid.
        const o = `${p}.self_attn.o_proj.weight`;
        heap.gemm(M, qDim, d, dx, d, 1, this.w(o), qDim, 1, datt, qDim);
        heap.gemm(d, qDim, M, dx, 1, d, a.att, qDim, 1, this.g(o), qDim, true);
        const dqkv = dbig;
        heap.f32.fill(0, dqkv, dqkv + M * qkvW);
        const group = c.n_heads / c.n_kv_heads;
        const scale = 1 / Math.sqrt(hd);
        seqs.forEach((s, si) => {
          const n = s.length;
          const row0 = rowStart[si];
          for (let h = 0; h < c.n_heads; h++) {
            const g = Math.floor(h / group);
            const q0 = row0 * qkvW + h * hd;
            const k0 = row0 * qkvW + qDim + g * hd;
            const v0 = k0 + kvDim;
            const pr = a.probs + pass.probOffset[si] + h * n * n;
            const dO = datt + row0 * qDim + h * hd;
            // dP = dO·Vᵀ; dV += Pᵀ·dO; dS = P⊙(dP − rowsum(dP⊙P))·scale; dQ = dS·K; dK += dSᵀ·Q.
            heap.gemm(n, n, hd, dO, qDim, 1, a.qkv + v0, 1, qkvW, dP, n);
            heap.gemm(n, hd, n, pr, 1, n, dO, qDim, 1, dqkv + v0, qkvW, true);
            heap.softmaxBackwardRows(pr, dP, n, scale);
            heap.gemm(n, hd, n, dP, n, 1, a.qkv + k0, qkvW, 1, dqkv + q0, qkvW, true);
            heap.gemm(n, hd, n, dP, 1, n, a.qkv + q0, qkvW, 1, dqkv + k0, qkvW, true);
          }
          this.rope(dqkv, qkvW, row0, n, 0, c.n_heads, true);
          this.rope(dqkv, qkvW, row0, n, qDim, c.n_kv_heads, true);
        });
        const names = ['q_proj', 'k_proj', 'v_proj'] as const;
        const cols = [0, qDim, qDim + kvDim];
        const widths = [qDim, kvDim, kvDim];
        names.forEach((nm, i) => {
          const w = `${p}.self_attn.${nm}.weight`;
          heap.gemm(M, d, widths[i], dqkv + cols[i], qkvW, 1, this.w(w), d, 1, dxn, d, i > 0);
          heap.gemm(widths[i], d, M, dqkv + cols[i], 1, qkvW, a.xn1, d, 1, this.g(w), d, true);
        });
        const inNorm = `${p}.input_layernorm.weight`;
        heap.rmsNormBackward(a.xIn, dxn, dx, M, d, this.w(inNorm), this.g(inNorm), c.norm_eps);
      }

      // Embedding scatter-add (the same rows may repeat, so accumulate row by row).
      {
        const f = heap.f32;
        const ge = this.g('model.embed_tokens.weight');
        let r = 0;
        for (const s of seqs) {
          for (const t of s) {
            const dst = ge + t * d;
            const src = dx + r++ * d;
            for (let j = 0; j < d; j++) f[dst + j] += f[src + j];
          }
        }
      }
    } finally {
      for (const ptr of [dP, datt, dh, dbig, dxn, dx]) heap.release(ptr);
      this.dropPass();
    }
  }

  /** Frees the gradient buffers (the model stays). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.dropPass();
    for (const g of this.grads.values()) this.heap.release(g.ptr);
    this.grads.clear();
  }

  private dropPass(): void {
    const pass = this.pass;
    if (!pass) return;
    this.pass = null;
    for (const a of pass.layers) for (const k of LAYER_KEYS) this.heap.release(a[k]);
    for (const ptr of [pass.xFinal, pass.xnf, pass.softmax]) this.heap.release(ptr);
  }

  private headName(): string {
    return this.config.tie_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  }

  private w(name: string): number {
    return this.model.parameterLocation(name).ptr;
  }

  private g(name: string): number {
    const g = this.grads.get(name);
    if (!g) throw new Error(`unknown tensor ${name}`);
    return g.ptr;
  }

  /** out (+)= in[M × K] · Wᵀ, W = [N × K], out row stride ldOut. */
  private linear(
    input: number,
    M: number,
    K: number,
    weight: string,
    out: number,
    ldOut: number,
    accumulate = false,
  ): void {
    const loc = this.model.parameterLocation(weight);
    const N = loc.shape[0];
    this.heap.gemm(M, N, K, input, K, 1, loc.ptr, 1, K, out, ldOut, accumulate);
  }

  /**
   * HF rotate_half RoPE on `heads` heads from column col0 of n rows at positions 0…n−1; `inverse` rotates
   * by −θ, which is the backward of the rotation (its transpose).
   */
  private rope(buf: number, ld: number, row0: number, n: number, col0: number, heads: number, inverse: boolean): void {
    const f = this.heap.f32;
    const hd = headDim(this.config);
    const half = hd / 2;
    const sign = inverse ? -1 : 1;
    for (let t = 0; t < n; t++) {
      const tab = t * half;
      for (let h = 0; h < heads; h++) {
        const base = buf + (row0 + t) * ld + col0 + h * hd;
        for (let i = 0; i < half; i++) {
          const cos = this.ropeCos[tab + i];
          const sin = sign * this.ropeSin[tab + i];
          const x = f[base + i];
          const y = f[base + i + half];
          f[base + i] = x * cos - y * sin;
          f[base + i + half] = y * cos + x * sin;
        }
      }
    }
  }
}
