import type { WasmHeap } from './wasm/heap';

/**
 * Causal attention over a KV cache, shared by the built-in models (model.ts) and the Hugging Face models
 * (hf/model.ts), which differ in their configuration's names, not in this.
 */

/**
 * From this many new query rows on, a head's attention runs as two matrix products (scores = Q·Kᵀ, out = P·V) with
 * a masked softmax between; below it, row by row (decoding is one row, where the products cost more than they save).
 */
export const ATTENTION_GEMM_MIN_ROWS = 4;

export interface AttentionShape {
  heads: number;
  /** Grouped-query attention: `heads / kvHeads` query heads share each key/value head. */
  kvHeads: number;
  headDim: number;
}

/**
 * One sequence's `n` new rows: their keys and values are appended to its cache after the `pos0` positions already
 * there, then its `n` new query rows attend over the whole cache. `kc`/`vc`: the layer's key and value cache (row stride kvHeads·headDim); `qkv`: the
 * fused projection buffer (row stride `qkvW`, queries first) from row `row0`; output rows go to `att` (row stride
 * heads·headDim); `scores` is scratch for n × (pos0 + n) floats.
 */
export function causalAttention(
  heap: WasmHeap,
  shape: AttentionShape,
  kc: number,
  vc: number,
  pos0: number,
  n: number,
  qkv: number,
  qkvW: number,
  row0: number,
  att: number,
  scores: number,
): void {
  const hd = shape.headDim;
  const qDim = shape.heads * hd;
  const kvDim = shape.kvHeads * hd;
  const f = heap.f32;
  for (let t = 0; t < n; t++) {
    const src = qkv + (row0 + t) * qkvW + qDim;
    const dst = (pos0 + t) * kvDim;
    f.copyWithin(kc + dst, src, src + kvDim);
    f.copyWithin(vc + dst, src + kvDim, src + 2 * kvDim);
  }
  const group = shape.heads / shape.kvHeads;
  const S = pos0 + n;
  const scale = 1 / Math.sqrt(hd);
  for (let h = 0; h < shape.heads; h++) {
    const g = Math.floor(h / group);
    const q0 = qkv + row0 * qkvW + h * hd;
    const out0 = att + row0 * qDim + h * hd;
    if (n >= ATTENTION_GEMM_MIN_ROWS) {
      // scores[n × S] = Q·Kᵀ, softmax with the causal mask, then out = P·V; masked entries are zeroed so the second
      // product can run over all S keys.
      heap.gemm(n, S, hd, q0, qkvW, 1, kc + g * hd, 1, kvDim, scores, S);
      heap.softmaxCausalRows(scores, n, S, pos0 + 1, scale);
      heap.gemm(n, hd, S, scores, S, 1, vc + g * hd, kvDim, 1, out0, qDim);
    } else {
      for (let t = 0; t < n; t++) {
        heap.attendRow(
          q0 + t * qkvW,
          kc + g * hd,
          vc + g * hd,
          pos0 + t + 1,
          hd,
          kvDim,
          scale,
          scores,
          out0 + t * qDim,
        );
      }
    }
  }
}
