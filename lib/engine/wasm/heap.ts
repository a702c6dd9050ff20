import { RELAXED_SIMD_WASM_BASE64, SIMD_WASM_BASE64 } from './kernels-wasm.generated';

/**
 * All engine tensors (weights, activations, KV caches) live in one WebAssembly memory so the matrix
 * kernels read them in place: copying operands in and out of wasm would cost as much as a small matmul.
 *
 * Pointers handed around the engine are float indices into `heap.f32` (byte offset / 4). The view must be
 * re-read after any `alloc`, because growing the memory detaches the previous ArrayBuffer.
 */

interface KernelExports {
  gemm_work_bytes(): number;
  packed_b_floats(K: number, N: number): number;
  tile_nr(): number;
  pack_b(K: number, N: number, B: number, rs: number, cs: number, dst: number): void;
  gemm_packed(
    M: number,
    N: number,
    K: number,
    A: number,
    rsA: number,
    csA: number,
    Bp: number,
    C: number,
    ldc: number,
    accumulate: number,
    work: number,
  ): void;
  attend_row(
    q: number,
    k: number,
    v: number,
    S: number,
    hd: number,
    kvStride: number,
    scale: number,
    scores: number,
    out: number,
  ): void;
  swiglu_rows(x: number, rows: number, n: number, ld: number, yOff: number): void;
  rms_norm_rows(x: number, out: number, rows: number, n: number, w: number, eps: number): void;
  softmax_causal_rows(x: number, n: number, S: number, valid0: number, scale: number): void;
  sum_squares(x: number, n: number): number;
  swiglu_forward(gu: number, h: number, rows: number, dff: number): void;
  swiglu_backward(gu: number, dh: number, dgu: number, rows: number, dff: number): void;
  rms_norm_backward(
    x: number,
    dy: number,
    dx: number,
    rows: number,
    n: number,
    w: number,
    dw: number,
    eps: number,
  ): void;
  softmax_stats_rows(x: number, rows: number, n: number, stats: number): void;
  softmax_backward_rows(p: number, dp: number, n: number, scale: number): void;
  adamw_step(
    w: number,
    g: number,
    m: number,
    v: number,
    n: number,
    lr: number,
    b1: number,
    b2: number,
    eps: number,
    wd: number,
    bc1: number,
    bc2: number,
    gscale: number,
  ): void;
  widen16_rows(src: number, dst: number, n: number, kind: number): void;
  gemv16(
    M: number,
    N: number,
    K: number,
    x: number,
    ldx: number,
    w: number,
    kind: number,
    y: number,
    ldy: number,
    accumulate: number,
  ): void;
  gemv_bf16(
    M: number,
    N: number,
    K: number,
    x: number,
    ldx: number,
    w: number,
    y: number,
    ldy: number,
    accumulate: number,
    scratch: number,
  ): void;
}

/** 16-bit float formats the kernels widen on the fly. */
export type Half = 'bf16' | 'f16';

export type KernelVariant = 'relaxed-simd' | 'simd';

const KERNEL_NAMES = [
  'gemm_work_bytes',
  'packed_b_floats',
  'tile_nr',
  'pack_b',
  'gemm_packed',
  'attend_row',
  'swiglu_rows',
  'rms_norm_rows',
  'softmax_causal_rows',
  'sum_squares',
  'swiglu_forward',
  'swiglu_backward',
  'rms_norm_backward',
  'softmax_stats_rows',
  'softmax_backward_rows',
  'adamw_step',
  'widen16_rows',
  'gemv16',
  'gemv_bf16',
] as const satisfies ReadonlyArray<keyof KernelExports>;

/** Checks that the module exports every kernel; wasm exports are untyped, so the signatures are ours. */
function bindKernels(exports: WebAssembly.Exports): KernelExports {
  for (const name of KERNEL_NAMES) {
    if (typeof exports[name] !== 'function') throw new Error(`wasm kernels: missing export ${name}`);
  }
  return exports as unknown as KernelExports;
}

const PAGE_BYTES = 65536;
// Low memory is left to the AssemblyScript stub runtime (it has no static data, but keep it clear).
const HEAP_BASE_FLOATS = PAGE_BYTES / 4;
// 16-byte alignment keeps every v128 load of a packed panel or a row start aligned.
const ALIGN_FLOATS = 4;

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function loadModule(prefer: KernelVariant): { module: WebAssembly.Module; variant: KernelVariant } {
  if (prefer === 'relaxed-simd') {
    const relaxed = decodeBase64(RELAXED_SIMD_WASM_BASE64);
    // Node ≥ 22 ships relaxed SIMD; Node 20 only with --experimental-wasm-relaxed-simd. Fall back quietly.
    if (WebAssembly.validate(relaxed)) return { module: new WebAssembly.Module(relaxed), variant: 'relaxed-simd' };
  }
  return { module: new WebAssembly.Module(decodeBase64(SIMD_WASM_BASE64)), variant: 'simd' };
}

export interface HeapOptions {
  /** Kernel variant to try first; `simd` forces the portable build (used to compare the two). */
  prefer?: KernelVariant;
  initialMegabytes?: number;
}

export class WasmHeap {
  readonly variant: KernelVariant;
  private readonly memory: WebAssembly.Memory;
  private readonly k: KernelExports;
  private view: Float32Array;
  private top: number; // first never-allocated float index
  private free: Array<{ ptr: number; size: number }> = []; // sorted by ptr, coalesced
  private readonly sizes = new Map<number, number>();
  private readonly workPtr: number;
  private scratchB = { ptr: 0, size: 0 };
  private scratchX = { ptr: 0, size: 0 };

  constructor(options: HeapOptions = {}) {
    const initialPages = Math.max(2, Math.ceil(((options.initialMegabytes ?? 8) * 1024 * 1024) / PAGE_BYTES));
    this.memory = new WebAssembly.Memory({ initial: initialPages, maximum: 65536 });
    const { module, variant } = loadModule(options.prefer ?? 'relaxed-simd');
    this.variant = variant;
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } });
    this.k = bindKernels(instance.exports);
    this.view = new Float32Array(this.memory.buffer);
    this.top = HEAP_BASE_FLOATS;
    this.workPtr = this.alloc(this.k.gemm_work_bytes() / 4);
  }

  /** The whole memory as floats; re-read after every alloc. */
  get f32(): Float32Array {
    if (this.view.buffer !== this.memory.buffer) this.view = new Float32Array(this.memory.buffer);
    return this.view;
  }

  /** Number of live allocations: a long-running server can check that a request left nothing behind. */
  get liveAllocations(): number {
    return this.sizes.size;
  }

  get bytesReserved(): number {
    return this.memory.buffer.byteLength;
  }

  /** Allocates `n` floats (contents unspecified unless `zero`), returning a float index. */
  alloc(n: number, zero = false): number {
    const size = Math.max(ALIGN_FLOATS, Math.ceil(n / ALIGN_FLOATS) * ALIGN_FLOATS);
    let ptr = -1;
    for (let i = 0; i < this.free.length; i++) {
      const seg = this.free[i];
      if (seg.size >= size) {
        ptr = seg.ptr;
        if (seg.size === size) this.free.splice(i, 1);
        else {
          seg.ptr += size;
          seg.size -= size;
        }
        break;
      }
    }
    if (ptr < 0) {
      ptr = this.top;
      this.top += size;
      const needBytes = this.top * 4;
      const have = this.memory.buffer.byteLength;
      if (needBytes > have) {
        // Grow geometrically so repeated small allocations don't grow (and detach views) every time.
        const want = Math.max(needBytes - have, have / 2);
        this.memory.grow(Math.ceil(want / PAGE_BYTES));
      }
    }
    this.sizes.set(ptr, size);
    if (zero) this.f32.fill(0, ptr, ptr + size);
    return ptr;
  }

  release(ptr: number): void {
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`heap: release of unknown pointer ${ptr}`);
    this.sizes.delete(ptr);
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.free[mid].ptr < ptr) lo = mid + 1;
      else hi = mid;
    }
    this.free.splice(lo, 0, { ptr, size });
    // Coalesce with the next and previous neighbours.
    const next = this.free[lo + 1];
    if (next && ptr + size === next.ptr) {
      this.free[lo].size += next.size;
      this.free.splice(lo + 1, 1);
    }
    const prev = this.free[lo - 1];
    if (prev && prev.ptr + prev.size === ptr) {
      prev.size += this.free[lo].size;
      this.free.splice(lo, 1);
    }
    // Give the tail back to the bump pointer so the free list stays short.
    const last = this.free[this.free.length - 1];
    if (last && last.ptr + last.size === this.top) {
      this.top = last.ptr;
      this.free.pop();
    }
  }

  /**
   * Copies raw bytes (e.g. 16-bit weights as stored) into a fresh allocation; returns its float index, so
   * the data starts at byte 4·ptr.
   */
  uploadBytes(src: Uint8Array): number {
    const ptr = this.alloc(Math.ceil(src.length / 4));
    new Uint8Array(this.memory.buffer, ptr * 4, src.length).set(src);
    return ptr;
  }

  /** f32 dst[n] ← the n 16-bit values at `src` (a float index; kind 'bf16' or 'f16'). */
  widen16(src: number, dst: number, n: number, kind: Half): void {
    this.k.widen16_rows(src * 4, dst * 4, n, kind === 'bf16' ? 0 : 1);
  }

  /**
   * y[m][j] (+)= Σ_k x[m][k]·W[j][k] for M rows of x (row stride ldx) and W = [N × K] 16-bit row-major
   * at float index w (byte 4·w).
   */
  gemv16(
    M: number,
    N: number,
    K: number,
    x: number,
    ldx: number,
    w: number,
    kind: Half,
    y: number,
    ldy: number,
    accumulate = false,
  ): void {
    if (kind === 'bf16' && K % 8 === 0) {
      // The even/odd bf16 kernel: needs M·K floats of scratch for the split x rows.
      const need = M * K;
      if (need > this.scratchX.size) {
        if (this.scratchX.size > 0) this.release(this.scratchX.ptr);
        this.scratchX = { ptr: this.alloc(need), size: need };
      }
      this.k.gemv_bf16(M, N, K, x * 4, ldx, w * 4, y * 4, ldy, accumulate ? 1 : 0, this.scratchX.ptr * 4);
      return;
    }
    this.k.gemv16(M, N, K, x * 4, ldx, w * 4, kind === 'bf16' ? 0 : 1, y * 4, ldy, accumulate ? 1 : 0);
  }

  /** Copies `src` into a fresh allocation. */
  upload(src: ArrayLike<number>): number {
    const ptr = this.alloc(src.length);
    this.f32.set(src, ptr);
    return ptr;
  }

  /** Floats a packed K × N op(B) needs. */
  packedBFloats(K: number, N: number): number {
    return this.k.packed_b_floats(K, N);
  }

  /** Packs op(B) (K × N; element (k, j) at b + k·rs + j·cs) into `dst` for gemmPacked. */
  packB(K: number, N: number, b: number, rs: number, cs: number, dst: number): void {
    this.k.pack_b(K, N, b * 4, rs, cs, dst * 4);
  }

  /** C (M × N, row stride ldc) = op(A)·packed op(B), or += with `accumulate`. */
  gemmPacked(
    M: number,
    N: number,
    K: number,
    a: number,
    rsA: number,
    csA: number,
    packedB: number,
    c: number,
    ldc: number,
    accumulate = false,
  ): void {
    this.k.gemm_packed(M, N, K, a * 4, rsA, csA, packedB * 4, c * 4, ldc, accumulate ? 1 : 0, this.workPtr * 4);
  }

  /**
   * One query row's attention over S cached positions: out[hd] = softmax(scale·q·Kᵀ)·V, with K and V rows
   * kvStride floats apart; `scores` is S floats of scratch.
   */
  attendRow(
    q: number,
    k: number,
    v: number,
    S: number,
    hd: number,
    kvStride: number,
    scale: number,
    scores: number,
    out: number,
  ): void {
    this.k.attend_row(q * 4, k * 4, v * 4, S, hd, kvStride, scale, scores * 4, out * 4);
  }

  /** x ← silu(x)·y for `rows` rows of n floats (row stride ld), y lying yOff floats after x in each row. */
  swigluRows(x: number, rows: number, n: number, ld: number, yOff: number): void {
    this.k.swiglu_rows(x * 4, rows, n, ld, yOff);
  }

  /**
   * In-place causal softmax of an n × S block: row t is softmax(scale·x) over its first valid0 + t entries,
   * zero after them.
   */
  softmaxCausalRows(x: number, n: number, S: number, valid0: number, scale: number): void {
    this.k.softmax_causal_rows(x * 4, n, S, valid0, scale);
  }

  /** RMSNorm of `rows` dense rows of n floats with weight w; out may equal x. */
  rmsNormRows(x: number, out: number, rows: number, n: number, w: number, eps: number): void {
    this.k.rms_norm_rows(x * 4, out * 4, rows, n, w * 4, eps);
  }

  /** Σ x² over n floats (f64 partial sums). */
  sumSquares(x: number, n: number): number {
    return this.k.sum_squares(x * 4, n);
  }

  /** h = silu(gate)·up from [gate | up] rows (stride 2·dff) into dense rows of dff floats. */
  swigluForward(gu: number, h: number, rows: number, dff: number): void {
    this.k.swiglu_forward(gu * 4, h * 4, rows, dff);
  }

  /** [d gate | d up] rows (stride 2·dff) from the pre-activations and dL/dh. */
  swigluBackward(gu: number, dh: number, dgu: number, rows: number, dff: number): void {
    this.k.swiglu_backward(gu * 4, dh * 4, dgu * 4, rows, dff);
  }

  /** RMSNorm backward: accumulates dL/dx into dx and dL/dw into dw, given the norm input x and dL/dy. */
  rmsNormBackward(
    x: number,
    dy: number,
    dx: number,
    rows: number,
    n: number,
    w: number,
    dw: number,
    eps: number,
  ): void {
    this.k.rms_norm_backward(x * 4, dy * 4, dx * 4, rows, n, w * 4, dw * 4, eps);
  }

  /** Rows of logits → softmax in place; stats gets [logsumexp, entropy] per row. */
  softmaxStatsRows(x: number, rows: number, n: number, stats: number): void {
    this.k.softmax_stats_rows(x * 4, rows, n, stats * 4);
  }

  /** Causal n × n softmax backward in place in dp (P from the forward), times `scale`. */
  softmaxBackwardRows(p: number, dp: number, n: number, scale: number): void {
    this.k.softmax_backward_rows(p * 4, dp * 4, n, scale);
  }

  /** One AdamW update of n weights in place (see gemm.as adamw_step). */
  adamwStep(
    w: number,
    g: number,
    m: number,
    v: number,
    n: number,
    o: {
      lr: number;
      beta1: number;
      beta2: number;
      eps: number;
      weightDecay: number;
      bc1: number;
      bc2: number;
      gradScale: number;
    },
  ): void {
    this.k.adamw_step(
      w * 4,
      g * 4,
      m * 4,
      v * 4,
      n,
      o.lr,
      o.beta1,
      o.beta2,
      o.eps,
      o.weightDecay,
      o.bc1,
      o.bc2,
      o.gradScale,
    );
  }

  /**
   * General strided product C = op(A)·op(B) (+= with `accumulate`): op(A) is M × K with element (i, k) at
   * a + i·rsA + k·csA, op(B) is K × N with element (k, j) at b + k·rsB + j·csB. Transposes are swapped
   * strides: A·Bᵀ for a row-major B (N × K) is rsB = 1, csB = K.
   */
  gemm(
    M: number,
    N: number,
    K: number,
    a: number,
    rsA: number,
    csA: number,
    b: number,
    rsB: number,
    csB: number,
    c: number,
    ldc: number,
    accumulate = false,
  ): void {
    const need = this.k.packed_b_floats(K, N);
    if (need > this.scratchB.size) {
      if (this.scratchB.size > 0) this.release(this.scratchB.ptr);
      this.scratchB = { ptr: this.alloc(need), size: need };
    }
    this.k.pack_b(K, N, b * 4, rsB, csB, this.scratchB.ptr * 4);
    this.gemmPacked(M, N, K, a, rsA, csA, this.scratchB.ptr, c, ldc, accumulate);
  }
}

let shared: WasmHeap | null = null;

/** One heap per thread (worker) is the normal setup; tests and single-model hosts use this one. */
export function defaultHeap(): WasmHeap {
  shared ??= new WasmHeap();
  return shared;
}
