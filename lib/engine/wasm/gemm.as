// AssemblyScript source of the engine's matrix kernels. Compiled by build-kernels.ts into
// kernels-wasm.generated.ts (two variants: plain SIMD128, and relaxed SIMD whose madd lowers to FMA).
// The file ends in .as, not .ts, so the app's tsc/eslint never see AssemblyScript-only types.
//
// Conventions: every pointer is a byte offset into the imported memory; matrices are row-major f32
// described by element strides (rs = row stride, cs = column stride), so a transposed operand is just
// swapped strides and A·B, A·Bᵀ and Aᵀ·B share one code path. C is always dense with row stride ldc.
//
// Algorithm: BLIS/Goto. op(B) is packed once into NR-column panels laid out [K][NR] (weights can stay
// packed across calls), op(A) is packed per (MC × KC) block into MR-row panels laid out [KC][MR], and a
// 6×8 register-tile micro-kernel streams both. 6×8 = 12 v128 accumulators + 2 B vectors + 1 broadcast =
// 15 of the 16 xmm registers V8 allocates on x64; a larger tile spills.

const MR: i32 = 6;
const NR: i32 = 8;
// KC × NR × 4 B = 8 KiB B micro-panel stays in L1; MC × KC × 4 B = 96 KiB packed A block stays in L2.
const KC: i32 = 256;
const MC: i32 = 96;

/** Bytes of scratch that gemm_packed needs at `work`. */
export function gemm_work_bytes(): i32 {
  return (MC * KC + MR * NR) * 4;
}

/** Floats a packed op(B) of K × N occupies. */
export function packed_b_floats(K: i32, N: i32): i32 {
  return ((N + NR - 1) / NR) * NR * K;
}

export function tile_mr(): i32 {
  return MR;
}
export function tile_nr(): i32 {
  return NR;
}

// @ts-ignore: AssemblyScript decorator
@inline function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    return f32x4.relaxed_madd(a, b, c);
  } else {
    return f32x4.add(f32x4.mul(a, b), c);
  }
}

/** Packs op(B) (K × N, element (k, j) at B + 4·(k·rs + j·cs)) into ceil(N/NR) panels of [K][NR], zero-padded. */
export function pack_b(K: i32, N: i32, B: usize, rs: i32, cs: i32, dst: usize): void {
  const panels = (N + NR - 1) / NR;
  for (let p = 0; p < panels; p++) {
    const j0 = p * NR;
    const nj = min(NR, N - j0);
    const out = dst + <usize>(p * K * NR) * 4;
    if (cs == 1 && nj == NR) {
      // op(B) rows are contiguous (plain A·B): two vector copies per k.
      for (let k = 0; k < K; k++) {
        const src = B + <usize>(k * rs + j0) * 4;
        const o = out + <usize>(k * NR) * 4;
        v128.store(o, v128.load(src));
        v128.store(o, v128.load(src, 16), 16);
      }
    } else if (rs == 1) {
      // op(B) = Wᵀ with W rows contiguous along k (the A·Bᵀ case): read each W row sequentially.
      for (let jj = 0; jj < NR; jj++) {
        if (jj < nj) {
          const src = B + <usize>((j0 + jj) * cs) * 4;
          for (let k = 0; k < K; k++) {
            store<f32>(out + <usize>(k * NR + jj) * 4, load<f32>(src + (<usize>k << 2)));
          }
        } else {
          for (let k = 0; k < K; k++) store<f32>(out + <usize>(k * NR + jj) * 4, 0);
        }
      }
    } else {
      for (let k = 0; k < K; k++) {
        for (let jj = 0; jj < NR; jj++) {
          const v: f32 = jj < nj ? load<f32>(B + <usize>(k * rs + (j0 + jj) * cs) * 4) : 0;
          store<f32>(out + <usize>(k * NR + jj) * 4, v);
        }
      }
    }
  }
}

/**
 * Height of the next row tile for `rem` remaining rows: 6 while possible, but 8 rows go as 4 + 4 rather
 * than 6 + 2, because a 2-row tile has too few independent accumulators to hide FMA latency (the batched
 * decode of 8 streams is exactly this case). Heights are 6, 4 or 2; a short tile is zero-padded.
 */
// @ts-ignore: AssemblyScript decorator
@inline function tile_rows(rem: i32): i32 {
  if (rem >= 6 && rem != 8) return 6;
  if (rem >= 3) return 4;
  return 2;
}

/** Packs an mc × kc block of op(A) into row panels of [kc][h], h following tile_rows, zero-padded. */
function pack_a(mc: i32, kc: i32, A: usize, rs: i32, cs: i32, dst: usize): void {
  let out = dst;
  for (let i0 = 0; i0 < mc; ) {
    const h = tile_rows(mc - i0);
    const mi = min(h, mc - i0);
    for (let r = 0; r < h; r++) {
      if (r < mi) {
        const src = A + <usize>((i0 + r) * rs) * 4;
        if (cs == 1) {
          for (let k = 0; k < kc; k++) {
            store<f32>(out + <usize>(k * h + r) * 4, load<f32>(src + (<usize>k << 2)));
          }
        } else {
          for (let k = 0; k < kc; k++) {
            store<f32>(out + <usize>(k * h + r) * 4, load<f32>(src + <usize>(k * cs) * 4));
          }
        }
      } else {
        for (let k = 0; k < kc; k++) store<f32>(out + <usize>(k * h + r) * 4, 0);
      }
    }
    out += <usize>(kc * h) * 4;
    i0 += h;
  }
}

// @ts-ignore: AssemblyScript decorator
@inline function store_row(c: usize, lo: v128, hi: v128, acc: bool): void {
  if (acc) {
    v128.store(c, f32x4.add(v128.load(c), lo));
    v128.store(c, f32x4.add(v128.load(c, 16), hi), 16);
  } else {
    v128.store(c, lo);
    v128.store(c, hi, 16);
  }
}

/** C[6×8] (+)= Apanel[kc][6] · Bpanel[kc][8]; ldcb is C's row stride in bytes. */
function kernel_6x8(kc: i32, a: usize, b: usize, c: usize, ldcb: usize, acc: bool): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let c40 = f32x4.splat(0), c41 = f32x4.splat(0);
  let c50 = f32x4.splat(0), c51 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(b);
    const b1 = v128.load(b, 16);
    let av = v128.load32_splat(a);
    c00 = madd(av, b0, c00);
    c01 = madd(av, b1, c01);
    av = v128.load32_splat(a, 4);
    c10 = madd(av, b0, c10);
    c11 = madd(av, b1, c11);
    av = v128.load32_splat(a, 8);
    c20 = madd(av, b0, c20);
    c21 = madd(av, b1, c21);
    av = v128.load32_splat(a, 12);
    c30 = madd(av, b0, c30);
    c31 = madd(av, b1, c31);
    av = v128.load32_splat(a, 16);
    c40 = madd(av, b0, c40);
    c41 = madd(av, b1, c41);
    av = v128.load32_splat(a, 20);
    c50 = madd(av, b0, c50);
    c51 = madd(av, b1, c51);
    a += 24;
    b += 32;
  }
  store_row(c, c00, c01, acc);
  store_row(c + ldcb, c10, c11, acc);
  store_row(c + 2 * ldcb, c20, c21, acc);
  store_row(c + 3 * ldcb, c30, c31, acc);
  store_row(c + 4 * ldcb, c40, c41, acc);
  store_row(c + 5 * ldcb, c50, c51, acc);
}

/** 4-row tile for the M remainder (a 4-row A panel); keeps 8 independent FMA chains like 6×8. */
function kernel_4x8(kc: i32, a: usize, b: usize, c: usize, ldcb: usize, acc: bool): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(b);
    const b1 = v128.load(b, 16);
    let av = v128.load32_splat(a);
    c00 = madd(av, b0, c00);
    c01 = madd(av, b1, c01);
    av = v128.load32_splat(a, 4);
    c10 = madd(av, b0, c10);
    c11 = madd(av, b1, c11);
    av = v128.load32_splat(a, 8);
    c20 = madd(av, b0, c20);
    c21 = madd(av, b1, c21);
    av = v128.load32_splat(a, 12);
    c30 = madd(av, b0, c30);
    c31 = madd(av, b1, c31);
    a += 16;
    b += 32;
  }
  store_row(c, c00, c01, acc);
  store_row(c + ldcb, c10, c11, acc);
  store_row(c + 2 * ldcb, c20, c21, acc);
  store_row(c + 3 * ldcb, c30, c31, acc);
}

/** 2-row tile for the last one or two rows (a 2-row A panel). */
function kernel_2x8(kc: i32, a: usize, b: usize, c: usize, ldcb: usize, acc: bool): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(b);
    const b1 = v128.load(b, 16);
    let av = v128.load32_splat(a);
    c00 = madd(av, b0, c00);
    c01 = madd(av, b1, c01);
    av = v128.load32_splat(a, 4);
    c10 = madd(av, b0, c10);
    c11 = madd(av, b1, c11);
    a += 8;
    b += 32;
  }
  store_row(c, c00, c01, acc);
  store_row(c + ldcb, c10, c11, acc);
}

/**
 * One row of A against packed B (the single-stream decode case): a 6-row tile would waste 5/6 of its
 * work, and unrolling k by 4 with separate accumulators hides the FMA latency a single chain would expose.
 */
function gemv_packed(N: i32, K: i32, A: usize, cs: i32, Bp: usize, C: usize, acc: bool, tmp: usize): void {
  const panels = (N + NR - 1) / NR;
  const csb = <usize>cs * 4;
  const panelBytes = <usize>(K * NR) * 4;
  let p = 0;
  // Two panels per pass: each broadcast of A feeds four FMAs instead of two, so fewer loads per FMA
  // (a GEMV is load-bound: every weight is used once).
  for (; p + 2 <= panels; p += 2) {
    let b0 = Bp + <usize>p * panelBytes;
    let b1 = b0 + panelBytes;
    let a = A;
    let s00 = f32x4.splat(0), s01 = f32x4.splat(0), s10 = f32x4.splat(0), s11 = f32x4.splat(0);
    let t00 = f32x4.splat(0), t01 = f32x4.splat(0), t10 = f32x4.splat(0), t11 = f32x4.splat(0);
    let k = 0;
    for (; k + 2 <= K; k += 2) {
      let av = v128.load32_splat(a);
      s00 = madd(av, v128.load(b0), s00);
      s01 = madd(av, v128.load(b0, 16), s01);
      s10 = madd(av, v128.load(b1), s10);
      s11 = madd(av, v128.load(b1, 16), s11);
      av = v128.load32_splat(a + csb);
      t00 = madd(av, v128.load(b0, 32), t00);
      t01 = madd(av, v128.load(b0, 48), t01);
      t10 = madd(av, v128.load(b1, 32), t10);
      t11 = madd(av, v128.load(b1, 48), t11);
      a += 2 * csb;
      b0 += 64;
      b1 += 64;
    }
    if (k < K) {
      const av = v128.load32_splat(a);
      s00 = madd(av, v128.load(b0), s00);
      s01 = madd(av, v128.load(b0, 16), s01);
      s10 = madd(av, v128.load(b1), s10);
      s11 = madd(av, v128.load(b1, 16), s11);
    }
    gemv_store(N, p, f32x4.add(s00, t00), f32x4.add(s01, t01), C, acc, tmp);
    gemv_store(N, p + 1, f32x4.add(s10, t10), f32x4.add(s11, t11), C, acc, tmp);
  }
  for (; p < panels; p++) {
    let b = Bp + <usize>(p * K * NR) * 4;
    let a = A;
    let s0 = f32x4.splat(0), s1 = f32x4.splat(0), t0 = f32x4.splat(0), t1 = f32x4.splat(0);
    let u0 = f32x4.splat(0), u1 = f32x4.splat(0), w0 = f32x4.splat(0), w1 = f32x4.splat(0);
    let k = 0;
    for (; k + 4 <= K; k += 4) {
      let av = v128.load32_splat(a);
      s0 = madd(av, v128.load(b), s0);
      s1 = madd(av, v128.load(b, 16), s1);
      av = v128.load32_splat(a + csb);
      t0 = madd(av, v128.load(b, 32), t0);
      t1 = madd(av, v128.load(b, 48), t1);
      av = v128.load32_splat(a + 2 * csb);
      u0 = madd(av, v128.load(b, 64), u0);
      u1 = madd(av, v128.load(b, 80), u1);
      av = v128.load32_splat(a + 3 * csb);
      w0 = madd(av, v128.load(b, 96), w0);
      w1 = madd(av, v128.load(b, 112), w1);
      a += 4 * csb;
      b += 128;
    }
    for (; k < K; k++) {
      const av = v128.load32_splat(a);
      s0 = madd(av, v128.load(b), s0);
      s1 = madd(av, v128.load(b, 16), s1);
      a += csb;
      b += 32;
    }
    const lo = f32x4.add(f32x4.add(s0, t0), f32x4.add(u0, w0));
    const hi = f32x4.add(f32x4.add(s1, t1), f32x4.add(u1, w1));
    gemv_store(N, p, lo, hi, C, acc, tmp);
  }
}

/** Writes (or adds) panel p's 8 outputs, clipped to N through `tmp` for the last panel. */
// @ts-ignore: AssemblyScript decorator
@inline function gemv_store(N: i32, p: i32, lo: v128, hi: v128, C: usize, acc: bool, tmp: usize): void {
  const j0 = p * NR;
  const nj = min(NR, N - j0);
  const c = C + (<usize>j0 << 2);
  if (nj == NR) {
    store_row(c, lo, hi, acc);
  } else {
    v128.store(tmp, lo);
    v128.store(tmp, hi, 16);
    for (let j = 0; j < nj; j++) {
      const v = load<f32>(tmp + (<usize>j << 2));
      store<f32>(c + (<usize>j << 2), acc ? load<f32>(c + (<usize>j << 2)) + v : v);
    }
  }
}

/**
 * C (M × N, row stride ldc) = op(A)·op(B), or += when accumulate ≠ 0. op(A) is M × K with element (i, k)
 * at A + 4·(i·rsA + k·csA); Bp is op(B) packed by pack_b; `work` holds gemm_work_bytes() of scratch.
 */
export function gemm_packed(
  M: i32,
  N: i32,
  K: i32,
  A: usize,
  rsA: i32,
  csA: i32,
  Bp: usize,
  C: usize,
  ldc: i32,
  accumulate: i32,
  work: usize,
): void {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (accumulate == 0) {
      for (let i = 0; i < M; i++) memory.fill(C + <usize>(i * ldc) * 4, 0, <usize>N * 4);
    }
    return;
  }
  if (M == 1) {
    gemv_packed(N, K, A, csA, Bp, C, accumulate != 0, work);
    return;
  }
  const ldcb = <usize>ldc * 4;
  const tmp = work + <usize>(MC * KC) * 4;
  const panels = (N + NR - 1) / NR;
  for (let pc = 0; pc < K; pc += KC) {
    const kc = min(KC, K - pc);
    const acc = accumulate != 0 || pc > 0;
    for (let ic = 0; ic < M; ic += MC) {
      const mc = min(MC, M - ic);
      pack_a(mc, kc, A + <usize>(ic * rsA + pc * csA) * 4, rsA, csA, work);
      for (let jp = 0; jp < panels; jp++) {
        const j0 = jp * NR;
        const nj = min(NR, N - j0);
        const bp = Bp + <usize>(jp * K * NR + pc * NR) * 4;
        let ap = work;
        for (let ir = 0; ir < mc; ) {
          const h = tile_rows(mc - ir);
          const mi = min(h, mc - ir);
          const cp = C + <usize>(ic + ir) * ldcb + (<usize>j0 << 2);
          if (nj == NR && mi == h) {
            if (h == 6) kernel_6x8(kc, ap, bp, cp, ldcb, acc);
            else if (h == 4) kernel_4x8(kc, ap, bp, cp, ldcb, acc);
            else kernel_2x8(kc, ap, bp, cp, ldcb, acc);
          } else {
            if (h == 6) kernel_6x8(kc, ap, bp, tmp, NR * 4, false);
            else if (h == 4) kernel_4x8(kc, ap, bp, tmp, NR * 4, false);
            else kernel_2x8(kc, ap, bp, tmp, NR * 4, false);
            for (let r = 0; r < mi; r++) {
              for (let j = 0; j < nj; j++) {
                const v = load<f32>(tmp + <usize>(r * NR + j) * 4);
                const o = cp + <usize>r * ldcb + (<usize>j << 2);
                store<f32>(o, acc ? load<f32>(o) + v : v);
              }
            }
          }
          ap += <usize>(kc * h) * 4;
          ir += h;
        }
      }
    }
  }
}

// @ts-ignore: AssemblyScript decorator
@inline function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}

/**
 * Vector exp (Cephes expf: Cody–Waite range reduction, degree-6 polynomial, exponent built from bits);
 * about 1 ulp, 4 lanes per call instead of one libm-style call per element. Inputs are clamped to the
 * range where 2^n stays a normal float.
 */
// @ts-ignore: AssemblyScript decorator
@inline function exp4(x: v128): v128 {
  x = f32x4.min(f32x4.max(x, f32x4.splat(-87.33654)), f32x4.splat(88.37626));
  const fx = f32x4.nearest(f32x4.mul(x, f32x4.splat(1.44269504088896341)));
  let r = f32x4.sub(x, f32x4.mul(fx, f32x4.splat(0.693359375)));
  r = f32x4.sub(r, f32x4.mul(fx, f32x4.splat(-2.12194440e-4)));
  let y = f32x4.splat(1.9875691500e-4);
  y = madd(y, r, f32x4.splat(1.3981999507e-3));
  y = madd(y, r, f32x4.splat(8.3334519073e-3));
  y = madd(y, r, f32x4.splat(4.1665795894e-2));
  y = madd(y, r, f32x4.splat(1.6666665459e-1));
  y = madd(y, r, f32x4.splat(5.0000001201e-1));
  y = madd(y, f32x4.mul(r, r), f32x4.add(r, f32x4.splat(1)));
  const pow2 = i32x4.shl(i32x4.add(i32x4.trunc_sat_f32x4_s(fx), i32x4.splat(127)), 23);
  return f32x4.mul(y, pow2);
}

/** Scalar form of exp4 (same rounding), for tails. */
// @ts-ignore: AssemblyScript decorator
@inline function exp1(x: f32): f32 {
  return f32x4.extract_lane(exp4(f32x4.splat(x)), 0);
}

/** [Σa, Σb, Σc, Σd]: four horizontal sums at once through a 4×4 transpose. */
// @ts-ignore: AssemblyScript decorator
@inline function sum4x4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(v128.shuffle<f32>(a, b, 0, 4, 1, 5), v128.shuffle<f32>(a, b, 2, 6, 3, 7));
  const cd = f32x4.add(v128.shuffle<f32>(c, d, 0, 4, 1, 5), v128.shuffle<f32>(c, d, 2, 6, 3, 7));
  return f32x4.add(v128.shuffle<f32>(ab, cd, 0, 1, 4, 5), v128.shuffle<f32>(ab, cd, 2, 3, 6, 7));
}

/**
 * Attention of one query row over S cached positions (the decode case, where a matmul's packing would
 * outweigh the work): out[hd] = softmax(scale · q·K[0:S]ᵀ) · V[0:S]. K and V rows are kvStride floats
 * apart; `scores` needs S floats of scratch.
 */
export function attend_row(q: usize, k: usize, v: usize, S: i32, hd: i32, kvStride: i32, scale: f32, scores: usize, out: usize): void {
  const strideB = <usize>kvStride * 4;
  let s = 0;
  let topv = f32x4.splat(-Infinity);
  if ((hd & 3) == 0) {
    // Eight keys at a time: eight independent FMA chains (one chain per key would be latency-bound), and
    // the per-key sums come out of two 4×4 transposes as vectors.
    const scv = f32x4.splat(scale);
    for (; s + 8 <= S; s += 8) {
      const k0 = k + <usize>s * strideB;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
      for (let i = 0; i < hd; i += 4) {
        const o = <usize>i << 2;
        const qv = v128.load(q + o);
        const kp = k0 + o;
        a0 = madd(qv, v128.load(kp), a0);
        a1 = madd(qv, v128.load(kp + strideB), a1);
        a2 = madd(qv, v128.load(kp + 2 * strideB), a2);
        a3 = madd(qv, v128.load(kp + 3 * strideB), a3);
        a4 = madd(qv, v128.load(kp + 4 * strideB), a4);
        a5 = madd(qv, v128.load(kp + 5 * strideB), a5);
        a6 = madd(qv, v128.load(kp + 6 * strideB), a6);
        a7 = madd(qv, v128.load(kp + 7 * strideB), a7);
      }
      const lo = f32x4.mul(sum4x4(a0, a1, a2, a3), scv);
      const hi = f32x4.mul(sum4x4(a4, a5, a6, a7), scv);
      v128.store(scores + (<usize>s << 2), lo);
      v128.store(scores + (<usize>s << 2), hi, 16);
      topv = f32x4.max(topv, f32x4.max(lo, hi));
    }
  }
  let top = max(max(f32x4.extract_lane(topv, 0), f32x4.extract_lane(topv, 1)), max(f32x4.extract_lane(topv, 2), f32x4.extract_lane(topv, 3)));
  for (; s < S; s++) {
    const kp = k + <usize>s * strideB;
    let dot: f32 = 0;
    for (let i = 0; i < hd; i++) dot += load<f32>(q + (<usize>i << 2)) * load<f32>(kp + (<usize>i << 2));
    dot *= scale;
    store<f32>(scores + (<usize>s << 2), dot);
    top = max(top, dot);
  }
  const topSplat = f32x4.splat(top);
  let sumv = f32x4.splat(0);
  let j = 0;
  for (; j + 4 <= S; j += 4) {
    const sp = scores + (<usize>j << 2);
    const e = exp4(f32x4.sub(v128.load(sp), topSplat));
    v128.store(sp, e);
    sumv = f32x4.add(sumv, e);
  }
  let sum = hsum(sumv);
  for (; j < S; j++) {
    const e = exp1(load<f32>(scores + (<usize>j << 2)) - top);
    store<f32>(scores + (<usize>j << 2), e);
    sum += e;
  }
  const inv: f32 = 1 / sum;
  // out = Σ p_s·V_s in column blocks held in registers across all keys (8 accumulators where possible).
  let i0 = 0;
  const iv = f32x4.splat(inv);
  for (; i0 + 32 <= hd; i0 += 32) {
    let o0 = f32x4.splat(0), o1 = f32x4.splat(0), o2 = f32x4.splat(0), o3 = f32x4.splat(0);
    let o4 = f32x4.splat(0), o5 = f32x4.splat(0), o6 = f32x4.splat(0), o7 = f32x4.splat(0);
    let vp = v + (<usize>i0 << 2);
    for (let jj = 0; jj < S; jj++) {
      const pv = v128.load32_splat(scores + (<usize>jj << 2));
      o0 = madd(pv, v128.load(vp), o0);
      o1 = madd(pv, v128.load(vp, 16), o1);
      o2 = madd(pv, v128.load(vp, 32), o2);
      o3 = madd(pv, v128.load(vp, 48), o3);
      o4 = madd(pv, v128.load(vp, 64), o4);
      o5 = madd(pv, v128.load(vp, 80), o5);
      o6 = madd(pv, v128.load(vp, 96), o6);
      o7 = madd(pv, v128.load(vp, 112), o7);
      vp += strideB;
    }
    const op = out + (<usize>i0 << 2);
    v128.store(op, f32x4.mul(o0, iv));
    v128.store(op, f32x4.mul(o1, iv), 16);
    v128.store(op, f32x4.mul(o2, iv), 32);
    v128.store(op, f32x4.mul(o3, iv), 48);
    v128.store(op, f32x4.mul(o4, iv), 64);
    v128.store(op, f32x4.mul(o5, iv), 80);
    v128.store(op, f32x4.mul(o6, iv), 96);
    v128.store(op, f32x4.mul(o7, iv), 112);
  }
  for (; i0 + 16 <= hd; i0 += 16) {
    let o0 = f32x4.splat(0), o1 = f32x4.splat(0), o2 = f32x4.splat(0), o3 = f32x4.splat(0);
    let vp = v + (<usize>i0 << 2);
    for (let jj = 0; jj < S; jj++) {
      const pv = f32x4.splat(load<f32>(scores + (<usize>jj << 2)));
      o0 = madd(pv, v128.load(vp), o0);
      o1 = madd(pv, v128.load(vp, 16), o1);
      o2 = madd(pv, v128.load(vp, 32), o2);
      o3 = madd(pv, v128.load(vp, 48), o3);
      vp += strideB;
    }
    const op = out + (<usize>i0 << 2);
    v128.store(op, f32x4.mul(o0, iv));
    v128.store(op, f32x4.mul(o1, iv), 16);
    v128.store(op, f32x4.mul(o2, iv), 32);
    v128.store(op, f32x4.mul(o3, iv), 48);
  }
  for (; i0 < hd; i0++) {
    let acc: f32 = 0;
    let vp = v + (<usize>i0 << 2);
    for (let jj = 0; jj < S; jj++) {
      acc += load<f32>(scores + (<usize>jj << 2)) * load<f32>(vp);
      vp += strideB;
    }
    store<f32>(out + (<usize>i0 << 2), acc * inv);
  }
}

/** x[rows × n] (row stride ld) ← silu(x)·y where y is the block `yOff` floats further along each row (SwiGLU). */
export function swiglu_rows(x: usize, rows: i32, n: i32, ld: i32, yOff: i32): void {
  const one = f32x4.splat(1);
  for (let r = 0; r < rows; r++) {
    const g = x + <usize>(r * ld) * 4;
    const u = g + <usize>yOff * 4;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      const a = v128.load(g + o);
      const silu = f32x4.div(a, f32x4.add(one, exp4(f32x4.neg(a))));
      v128.store(g + o, f32x4.mul(silu, v128.load(u + o)));
    }
    for (; i < n; i++) {
      const o = <usize>i << 2;
      const a = load<f32>(g + o);
      store<f32>(g + o, (a / (1 + exp1(-a))) * load<f32>(u + o));
    }
  }
}

/** out[r] = x[r] / sqrt(mean(x[r]²) + eps) · w for rows × n (dense rows); out may alias x. */
export function rms_norm_rows(x: usize, out: usize, rows: i32, n: i32, w: usize, eps: f32): void {
  const n4 = n & ~3;
  for (let r = 0; r < rows; r++) {
    const xr = x + <usize>(r * n) * 4;
    const or = out + <usize>(r * n) * 4;
    let acc = f32x4.splat(0);
    let i = 0;
    for (; i < n4; i += 4) {
      const a = v128.load(xr + (<usize>i << 2));
      acc = madd(a, a, acc);
    }
    let ss = hsum(acc);
    for (; i < n; i++) {
      const a = load<f32>(xr + (<usize>i << 2));
      ss += a * a;
    }
    const inv = f32x4.splat(<f32>1 / Mathf.sqrt(ss / <f32>n + eps));
    i = 0;
    for (; i < n4; i += 4) {
      const o = (<usize>i << 2);
      v128.store(or + o, f32x4.mul(f32x4.mul(v128.load(xr + o), inv), v128.load(w + o)));
    }
    const invs = f32x4.extract_lane(inv, 0);
    for (; i < n; i++) {
      const o = (<usize>i << 2);
      store<f32>(or + o, load<f32>(xr + o) * invs * load<f32>(w + o));
    }
  }
}

/**
 * Causal softmax of an n × S score block in place: row t keeps its first `valid0 + t` entries,
 * softmax(scale · x), and zeroes the rest so a following P·V product may run over all S columns.
 */
export function softmax_causal_rows(x: usize, n: i32, S: i32, valid0: i32, scale: f32): void {
  const sc = f32x4.splat(scale);
  for (let t = 0; t < n; t++) {
    const row = x + <usize>(t * S) * 4;
    const valid = min(S, valid0 + t);
    let top: f32 = -Infinity;
    for (let j = 0; j < valid; j++) top = max(top, load<f32>(row + (<usize>j << 2)));
    const shift = f32x4.splat(top * scale);
    let sumv = f32x4.splat(0);
    let j = 0;
    for (; j + 4 <= valid; j += 4) {
      const p = row + (<usize>j << 2);
      const e = exp4(f32x4.sub(f32x4.mul(v128.load(p), sc), shift));
      v128.store(p, e);
      sumv = f32x4.add(sumv, e);
    }
    let sum = hsum(sumv);
    for (; j < valid; j++) {
      const p = row + (<usize>j << 2);
      const e = exp1(load<f32>(p) * scale - top * scale);
      store<f32>(p, e);
      sum += e;
    }
    const inv = f32x4.splat(<f32>1 / sum);
    j = 0;
    for (; j + 4 <= valid; j += 4) {
      const p = row + (<usize>j << 2);
      v128.store(p, f32x4.mul(v128.load(p), inv));
    }
    const invs = f32x4.extract_lane(inv, 0);
    for (; j < valid; j++) {
      const p = row + (<usize>j << 2);
      store<f32>(p, load<f32>(p) * invs);
    }
    if (valid < S) memory.fill(row + (<usize>valid << 2), 0, <usize>(S - valid) * 4);
  }
}

// ---------------------------------------------------------------------------------------------------
// Training kernels: the elementwise halves of the forward/backward pass (lib/engine/train/trainer.ts).
// In plain JS these loops ran at ~1 GFLOP/s and took as long as the matmuls around them.

/** Σ x² over n floats (gradient norms). */
export function sum_squares(x: usize, n: i32): f64 {
  let acc0 = f32x4.splat(0);
  let acc1 = f32x4.splat(0);
  let i = 0;
  let total: f64 = 0;
  // Flush the f32 accumulators into f64 every 4096 floats so millions of squares keep their precision.
  while (i + 8 <= n) {
    const end = min(n & ~7, i + 4096);
    for (; i < end; i += 8) {
      const a = v128.load(x + (<usize>i << 2));
      const b = v128.load(x + (<usize>i << 2), 16);
      acc0 = madd(a, a, acc0);
      acc1 = madd(b, b, acc1);
    }
    total += <f64>hsum(f32x4.add(acc0, acc1));
    acc0 = f32x4.splat(0);
    acc1 = f32x4.splat(0);
  }
  for (; i < n; i++) {
    const a = load<f32>(x + (<usize>i << 2));
    total += <f64>(a * a);
  }
  return total;
}

/** h[r] = silu(gate[r])·up[r] for rows of [gate | up] (row stride 2·dff) into dense rows of h. */
export function swiglu_forward(gu: usize, h: usize, rows: i32, dff: i32): void {
  const one = f32x4.splat(1);
  for (let r = 0; r < rows; r++) {
    const g = gu + <usize>(r * 2 * dff) * 4;
    const u = g + <usize>dff * 4;
    const o = h + <usize>(r * dff) * 4;
    let i = 0;
    for (; i + 4 <= dff; i += 4) {
      const off = <usize>i << 2;
      const a = v128.load(g + off);
      const silu = f32x4.div(a, f32x4.add(one, exp4(f32x4.neg(a))));
      v128.store(o + off, f32x4.mul(silu, v128.load(u + off)));
    }
    for (; i < dff; i++) {
      const off = <usize>i << 2;
      const a = load<f32>(g + off);
      store<f32>(o + off, (a / (1 + exp1(-a))) * load<f32>(u + off));
    }
  }
}

/**
 * SwiGLU backward: with s = σ(g), silu = g·s and silu' = s·(1 + g·(1 − s)),
 * d gate = dh·up·silu', d up = dh·silu; written as [d gate | d up] rows (stride 2·dff).
 */
export function swiglu_backward(gu: usize, dh: usize, dgu: usize, rows: i32, dff: i32): void {
  const one = f32x4.splat(1);
  for (let r = 0; r < rows; r++) {
    const g = gu + <usize>(r * 2 * dff) * 4;
    const u = g + <usize>dff * 4;
    const dg = dgu + <usize>(r * 2 * dff) * 4;
    const du = dg + <usize>dff * 4;
    const d = dh + <usize>(r * dff) * 4;
    let i = 0;
    for (; i + 4 <= dff; i += 4) {
      const off = <usize>i << 2;
      const a = v128.load(g + off);
      const s = f32x4.div(one, f32x4.add(one, exp4(f32x4.neg(a))));
      const silu = f32x4.mul(a, s);
      const dsilu = f32x4.mul(s, madd(a, f32x4.sub(one, s), one));
      const dv = v128.load(d + off);
      v128.store(dg + off, f32x4.mul(f32x4.mul(dv, v128.load(u + off)), dsilu));
      v128.store(du + off, f32x4.mul(dv, silu));
    }
    for (; i < dff; i++) {
      const off = <usize>i << 2;
      const a = load<f32>(g + off);
      const s: f32 = 1 / (1 + exp1(-a));
      const dv = load<f32>(d + off);
      store<f32>(dg + off, dv * load<f32>(u + off) * s * (1 + a * (1 - s)));
      store<f32>(du + off, dv * a * s);
    }
  }
}

/**
 * RMSNorm backward for y = x·r·w, r = 1/√(mean(x²) + eps):
 * dx += r·(dy⊙w) − x·r³·Σ(dy⊙w⊙x)/n, dw += Σ_rows dy⊙x·r. Accumulates into dx and dw.
 */
export function rms_norm_backward(x: usize, dy: usize, dx: usize, rows: i32, n: i32, w: usize, dw: usize, eps: f32): void {
  const n4 = n & ~3;
  for (let r = 0; r < rows; r++) {
    const xr = x + <usize>(r * n) * 4;
    const dyr = dy + <usize>(r * n) * 4;
    const dxr = dx + <usize>(r * n) * 4;
    let ssv = f32x4.splat(0);
    let dotv = f32x4.splat(0);
    let i = 0;
    for (; i < n4; i += 4) {
      const o = <usize>i << 2;
      const a = v128.load(xr + o);
      ssv = madd(a, a, ssv);
      dotv = madd(f32x4.mul(v128.load(dyr + o), v128.load(w + o)), a, dotv);
    }
    let ss = hsum(ssv);
    let dot = hsum(dotv);
    for (; i < n; i++) {
      const o = <usize>i << 2;
      const a = load<f32>(xr + o);
      ss += a * a;
      dot += load<f32>(dyr + o) * load<f32>(w + o) * a;
    }
    const inv: f32 = <f32>1 / Mathf.sqrt(ss / <f32>n + eps);
    const k: f32 = (inv * inv * inv * dot) / <f32>n;
    const invv = f32x4.splat(inv);
    const kv = f32x4.splat(k);
    i = 0;
    for (; i < n4; i += 4) {
      const o = <usize>i << 2;
      const a = v128.load(xr + o);
      const g = v128.load(dyr + o);
      const gx = f32x4.sub(f32x4.mul(invv, f32x4.mul(g, v128.load(w + o))), f32x4.mul(a, kv));
      v128.store(dxr + o, f32x4.add(v128.load(dxr + o), gx));
      v128.store(dw + o, madd(f32x4.mul(g, a), invv, v128.load(dw + o)));
    }
    for (; i < n; i++) {
      const o = <usize>i << 2;
      const a = load<f32>(xr + o);
      const g = load<f32>(dyr + o);
      store<f32>(dxr + o, load<f32>(dxr + o) + inv * g * load<f32>(w + o) - a * k);
      store<f32>(dw + o, load<f32>(dw + o) + g * a * inv);
    }
  }
}

/**
 * Rows of logits → softmax in place; stats[2r] = log Σ exp (logsumexp), stats[2r+1] = entropy
 * H = lse − Σ p·z. Scalar log: one per row.
 */
export function softmax_stats_rows(x: usize, rows: i32, n: i32, stats: usize): void {
  for (let r = 0; r < rows; r++) {
    const row = x + <usize>(r * n) * 4;
    let top: f32 = -Infinity;
    for (let j = 0; j < n; j++) top = max(top, load<f32>(row + (<usize>j << 2)));
    const shift = f32x4.splat(top);
    let sumv = f32x4.splat(0);
    let pzv = f32x4.splat(0);
    let j = 0;
    for (; j + 4 <= n; j += 4) {
      const p = row + (<usize>j << 2);
      const z = f32x4.sub(v128.load(p), shift);
      const e = exp4(z);
      v128.store(p, e);
      sumv = f32x4.add(sumv, e);
      pzv = madd(e, z, pzv);
    }
    let sum = hsum(sumv);
    let pz = hsum(pzv);
    for (; j < n; j++) {
      const p = row + (<usize>j << 2);
      const z = load<f32>(p) - top;
      const e = exp1(z);
      store<f32>(p, e);
      sum += e;
      pz += e * z;
    }
    const inv: f32 = <f32>1 / sum;
    const lse: f32 = Mathf.log(sum);
    store<f32>(stats + (<usize>(2 * r) << 2), top + lse);
    store<f32>(stats + (<usize>(2 * r + 1) << 2), lse - pz * inv);
    const iv = f32x4.splat(inv);
    j = 0;
    for (; j + 4 <= n; j += 4) {
      const p = row + (<usize>j << 2);
      v128.store(p, f32x4.mul(v128.load(p), iv));
    }
    for (; j < n; j++) {
      const p = row + (<usize>j << 2);
      store<f32>(p, load<f32>(p) * inv);
    }
  }
}

/** Softmax backward for an n × n causal block, in place in dp: dS = P⊙(dP − Σ_j P·dP)·scale. */
export function softmax_backward_rows(p: usize, dp: usize, n: i32, scale: f32): void {
  const sc = f32x4.splat(scale);
  for (let t = 0; t < n; t++) {
    const pr = p + <usize>(t * n) * 4;
    const dr = dp + <usize>(t * n) * 4;
    const valid = t + 1; // causal: entries after t are zero in P
    let dotv = f32x4.splat(0);
    let j = 0;
    for (; j + 4 <= valid; j += 4) {
      const o = <usize>j << 2;
      dotv = madd(v128.load(pr + o), v128.load(dr + o), dotv);
    }
    let dot = hsum(dotv);
    for (; j < valid; j++) {
      const o = <usize>j << 2;
      dot += load<f32>(pr + o) * load<f32>(dr + o);
    }
    const dv = f32x4.splat(dot);
    j = 0;
    for (; j + 4 <= valid; j += 4) {
      const o = <usize>j << 2;
      v128.store(dr + o, f32x4.mul(f32x4.mul(v128.load(pr + o), f32x4.sub(v128.load(dr + o), dv)), sc));
    }
    for (; j < valid; j++) {
      const o = <usize>j << 2;
      store<f32>(dr + o, load<f32>(pr + o) * (load<f32>(dr + o) - dot) * scale);
    }
    if (valid < n) memory.fill(dr + (<usize>valid << 2), 0, <usize>(n - valid) * 4);
  }
}

/**
 * AdamW (decoupled weight decay, PyTorch's order): w ← w·(1 − lr·wd), m ← β1·m + (1−β1)·g,
 * v ← β2·v + (1−β2)·g², w ← w − lr·(m/bc1)/(√(v/bc2) + eps), with g = grad·gscale (clipping).
 */
export function adamw_step(w: usize, g: usize, m: usize, v: usize, n: i32, lr: f32, b1: f32, b2: f32, eps: f32, wd: f32, bc1: f32, bc2: f32, gscale: f32): void {
  const decay = f32x4.splat(1 - lr * wd);
  const b1v = f32x4.splat(b1);
  const c1v = f32x4.splat(1 - b1);
  const b2v = f32x4.splat(b2);
  const c2v = f32x4.splat(1 - b2);
  const gs = f32x4.splat(gscale);
  const stepv = f32x4.splat(lr / bc1);
  const ibc2 = f32x4.splat(<f32>1 / bc2);
  const epsv = f32x4.splat(eps);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const o = <usize>i << 2;
    const gv = f32x4.mul(v128.load(g + o), gs);
    const mv = madd(b1v, v128.load(m + o), f32x4.mul(c1v, gv));
    const vv = madd(b2v, v128.load(v + o), f32x4.mul(c2v, f32x4.mul(gv, gv)));
    v128.store(m + o, mv);
    v128.store(v + o, vv);
    const denom = f32x4.add(f32x4.sqrt(f32x4.mul(vv, ibc2)), epsv);
    const wv = f32x4.mul(v128.load(w + o), decay);
    v128.store(w + o, f32x4.sub(wv, f32x4.div(f32x4.mul(stepv, mv), denom)));
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    const gv = load<f32>(g + o) * gscale;
    const mv = b1 * load<f32>(m + o) + (1 - b1) * gv;
    const vv = b2 * load<f32>(v + o) + (1 - b2) * gv * gv;
    store<f32>(m + o, mv);
    store<f32>(v + o, vv);
    const wv = load<f32>(w + o) * (1 - lr * wd);
    store<f32>(w + o, wv - ((lr / bc1) * mv) / (Mathf.sqrt(vv / bc2) + eps));
  }
}

// ---------------------------------------------------------------------------------------------------------
// 16-bit weights (Hugging Face models keep bf16 / f16 weights 16-bit in memory; compute stays f32).
// kind 0 = bfloat16, 1 = IEEE float16. Widening is integer work on each 8-lane load.

/** Lanes 0–3 (hi = false) or 4–7 (hi = true) of eight 16-bit values, as f32x4. */
// @ts-ignore: AssemblyScript decorator
@inline function widen16x4(v: v128, hi: bool, kind: i32): v128 {
  const h = hi ? i32x4.extend_high_i16x8_u(v) : i32x4.extend_low_i16x8_u(v);
  if (kind == 0) return i32x4.shl(h, 16);
  // float16: shift exponent and mantissa into place and rescale by 2^112 (exact for normals and
  // subnormals, which wasm never flushes); exponent 31 (inf / NaN) gets the f32 all-ones exponent.
  const em = v128.and(h, i32x4.splat(0x7fff));
  let f = f32x4.mul(i32x4.shl(em, 13), f32x4.splat(5.192296858534828e33));
  f = v128.or(f, v128.and(i32x4.ge_s(em, i32x4.splat(0x7c00)), i32x4.splat(0x7f800000)));
  return v128.or(f, i32x4.shl(v128.and(h, i32x4.splat(0x8000)), 16));
}

// @ts-ignore: AssemblyScript decorator
@inline function widen16(h: u32, kind: i32): f32 {
  if (kind == 0) return reinterpret<f32>(h << 16);
  const em = h & 0x7fff;
  let f = reinterpret<f32>(em << 13) * 5.192296858534828e33;
  if (em >= 0x7c00) f = reinterpret<f32>(reinterpret<u32>(f) | 0x7f800000);
  return reinterpret<f32>(reinterpret<u32>(f) | ((h & 0x8000) << 16));
}

/** dst[n] (f32) ← src[n] (16-bit of the given kind). */
export function widen16_rows(src: usize, dst: usize, n: i32, kind: i32): void {
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const v = v128.load(src + (<usize>i << 1));
    v128.store(dst + (<usize>i << 2), widen16x4(v, false, kind));
    v128.store(dst + (<usize>i << 2), widen16x4(v, true, kind), 16);
  }
  for (; i < n; i++) store<f32>(dst + (<usize>i << 2), widen16(load<u16>(src + (<usize>i << 1)), kind));
}

/**
 * y[m][j] (+)= Σ_k x[m][k]·W[j][k] for m < M, j < N, with W = [N × K] 16-bit row-major (a linear layer's
 * weight as stored): the decode-step product. Four weight rows at a time against every x row, so a batch
 * of M streams reads each weight block from memory once and from L1 for the other rows.
 */
export function gemv16(M: i32, N: i32, K: i32, x: usize, ldx: i32, W: usize, kind: i32, y: usize, ldy: i32, accumulate: i32): void {
  const rowB = <usize>K << 1;
  const K8 = K & ~7;
  let j = 0;
  for (; j + 4 <= N; j += 4) {
    const w0 = W + <usize>j * rowB;
    for (let m = 0; m < M; m++) {
      const xr = x + <usize>(m * ldx) * 4;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      for (let k = 0; k < K8; k += 8) {
        const xp = xr + (<usize>k << 2);
        const xl = v128.load(xp);
        const xh = v128.load(xp, 16);
        const wp = w0 + (<usize>k << 1);
        const v0 = v128.load(wp);
        const v1 = v128.load(wp + rowB);
        const v2 = v128.load(wp + 2 * rowB);
        const v3 = v128.load(wp + 3 * rowB);
        a0 = madd(xl, widen16x4(v0, false, kind), a0);
        b0 = madd(xh, widen16x4(v0, true, kind), b0);
        a1 = madd(xl, widen16x4(v1, false, kind), a1);
        b1 = madd(xh, widen16x4(v1, true, kind), b1);
        a2 = madd(xl, widen16x4(v2, false, kind), a2);
        b2 = madd(xh, widen16x4(v2, true, kind), b2);
        a3 = madd(xl, widen16x4(v3, false, kind), a3);
        b3 = madd(xh, widen16x4(v3, true, kind), b3);
      }
      let s = sum4x4(f32x4.add(a0, b0), f32x4.add(a1, b1), f32x4.add(a2, b2), f32x4.add(a3, b3));
      if (K8 < K) {
        let t0: f32 = 0, t1: f32 = 0, t2: f32 = 0, t3: f32 = 0;
        for (let k = K8; k < K; k++) {
          const xv = load<f32>(xr + (<usize>k << 2));
          const wp = w0 + (<usize>k << 1);
          t0 += xv * widen16(load<u16>(wp), kind);
          t1 += xv * widen16(load<u16>(wp + rowB), kind);
          t2 += xv * widen16(load<u16>(wp + 2 * rowB), kind);
          t3 += xv * widen16(load<u16>(wp + 3 * rowB), kind);
        }
        let t = f32x4.splat(t0);
        t = f32x4.replace_lane(t, 1, t1);
        t = f32x4.replace_lane(t, 2, t2);
        t = f32x4.replace_lane(t, 3, t3);
        s = f32x4.add(s, t);
      }
      const yp = y + <usize>(m * ldy + j) * 4;
      if (accumulate) s = f32x4.add(s, v128.load(yp));
      v128.store(yp, s);
    }
  }
  for (; j < N; j++) {
    const wr = W + <usize>j * rowB;
    for (let m = 0; m < M; m++) {
      const xr = x + <usize>(m * ldx) * 4;
      let acc: f32 = 0;
      for (let k = 0; k < K; k++) acc += load<f32>(xr + (<usize>k << 2)) * widen16(load<u16>(wr + (<usize>k << 1)), kind);
      const yp = y + <usize>(m * ldy + j) * 4;
      store<f32>(yp, accumulate ? load<f32>(yp) + acc : acc);
    }
  }
}

/**
 * gemv16 for bfloat16 weights with K a multiple of 8, cheaper per weight: a v128 of eight bf16 is four u32
 * lanes holding elements (2i, 2i+1); `shl 16` turns it into the even elements as f32 and `and 0xffff0000`
 * into the odd ones, so each x row is first split into even/odd halves (8-element groups, in `scratch`,
 * M·K floats) and no lane shuffles or extends remain in the inner loop.
 */
export function gemv_bf16(M: i32, N: i32, K: i32, x: usize, ldx: i32, W: usize, y: usize, ldy: i32, accumulate: i32, scratch: usize): void {
  for (let m = 0; m < M; m++) {
    const xr = x + <usize>(m * ldx) * 4;
    const xs = scratch + <usize>(m * K) * 4;
    for (let k = 0; k < K; k += 8) {
      const a = v128.load(xr + (<usize>k << 2));
      const b = v128.load(xr + (<usize>k << 2), 16);
      v128.store(xs + (<usize>k << 2), v128.shuffle<f32>(a, b, 0, 2, 4, 6));
      v128.store(xs + (<usize>k << 2), v128.shuffle<f32>(a, b, 1, 3, 5, 7), 16);
    }
  }
  const rowB = <usize>K << 1;
  const hiMask = i32x4.splat(0xffff0000);
  let j = 0;
  for (; j + 4 <= N; j += 4) {
    const w0 = W + <usize>j * rowB;
    for (let m = 0; m < M; m++) {
      const xs = scratch + <usize>(m * K) * 4;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      for (let k = 0; k < K; k += 8) {
        const xp = xs + (<usize>k << 2);
        const xe = v128.load(xp);
        const xo = v128.load(xp, 16);
        const wp = w0 + (<usize>k << 1);
        const v0 = v128.load(wp);
        const v1 = v128.load(wp + rowB);
        const v2 = v128.load(wp + 2 * rowB);
        const v3 = v128.load(wp + 3 * rowB);
        a0 = madd(xe, i32x4.shl(v0, 16), a0);
        b0 = madd(xo, v128.and(v0, hiMask), b0);
        a1 = madd(xe, i32x4.shl(v1, 16), a1);
        b1 = madd(xo, v128.and(v1, hiMask), b1);
        a2 = madd(xe, i32x4.shl(v2, 16), a2);
        b2 = madd(xo, v128.and(v2, hiMask), b2);
        a3 = madd(xe, i32x4.shl(v3, 16), a3);
        b3 = madd(xo, v128.and(v3, hiMask), b3);
      }
      let s = sum4x4(f32x4.add(a0, b0), f32x4.add(a1, b1), f32x4.add(a2, b2), f32x4.add(a3, b3));
      const yp = y + <usize>(m * ldy + j) * 4;
      if (accumulate) s = f32x4.add(s, v128.load(yp));
      v128.store(yp, s);
    }
  }
  for (; j < N; j++) {
    const wr = W + <usize>j * rowB;
    for (let m = 0; m < M; m++) {
      const xr = x + <usize>(m * ldx) * 4;
      let acc: f32 = 0;
      for (let k = 0; k < K; k++) acc += load<f32>(xr + (<usize>k << 2)) * widen16(load<u16>(wr + (<usize>k << 1)), 0);
      const yp = y + <usize>(m * ldy + j) * 4;
      store<f32>(yp, accumulate ? load<f32>(yp) + acc : acc);
    }
  }
}
