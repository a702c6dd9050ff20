import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { GENERATED_PATH, renderGeneratedModule } from './build-kernels';
import { WasmHeap, type KernelVariant } from './heap';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

/** Reference: C[i][j] = Σ_k opA(i,k)·opB(k,j) with the same stride conventions as the kernel. */
function naive(
  M: number,
  N: number,
  K: number,
  A: Float32Array,
  rsA: number,
  csA: number,
  B: Float32Array,
  rsB: number,
  csB: number,
): Float64Array {
  const C = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += A[i * rsA + k * csA] * B[k * rsB + j * csB];
      C[i * N + j] = s;
    }
  return C;
}

const shapes: Array<[number, number, number]> = [
  [1, 1, 1],
  [1, 9, 7],
  [1, 16, 130],
  [2, 8, 3],
  [5, 7, 11],
  [6, 8, 256],
  [7, 17, 300],
  [13, 40, 64],
  [100, 33, 513],
  [97, 129, 70],
];
const layouts = ['A·B', 'A·Bᵀ', 'Aᵀ·B', 'Aᵀ·Bᵀ'] as const;

// Node 20 hides relaxed SIMD behind a flag; enabling it here makes the FMA build run under test too.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe.each<KernelVariant>(['simd', 'relaxed-simd'])('wasm gemm (%s)', (prefer) => {
  const heap = new WasmHeap({ prefer, initialMegabytes: 2 });
  it('loads the requested variant', () => expect(heap.variant).toBe(prefer));
  for (const layout of layouts) {
    it(`${layout} matches a float64 reference on edge shapes`, () => {
      const rand = lcg(42);
      for (const [M, N, K] of shapes) {
        const tA = layout.startsWith('Aᵀ');
        const tB = layout.endsWith('Bᵀ');
        // Stored row-major: A as M×K (or K×M when transposed), B as K×N (or N×K).
        const A = Float32Array.from({ length: M * K }, rand);
        const B = Float32Array.from({ length: K * N }, rand);
        const [rsA, csA] = tA ? [1, M] : [K, 1];
        const [rsB, csB] = tB ? [1, K] : [N, 1];
        const a = heap.upload(A);
        const b = heap.upload(B);
        const c = heap.alloc(M * N);
        heap.f32.fill(1, c, c + M * N);
        heap.gemm(M, N, K, a, rsA, csA, b, rsB, csB, c, N, true); // accumulate onto ones
        const want = naive(M, N, K, A, rsA, csA, B, rsB, csB);
        const got = heap.f32.subarray(c, c + M * N);
        for (let i = 0; i < M * N; i++) expect(got[i]).toBeCloseTo(want[i] + 1, 4);
        heap.gemm(M, N, K, a, rsA, csA, b, rsB, csB, c, N, false); // overwrite
        const got2 = heap.f32.subarray(c, c + M * N);
        for (let i = 0; i < M * N; i++) expect(got2[i]).toBeCloseTo(want[i], 4);
        heap.release(a);
        heap.release(b);
        heap.release(c);
      }
    });
  }

  it('writes only inside C (row stride larger than N)', () => {
    const M = 7,
      N = 9,
      K = 5,
      ldc = 12;
    const a = heap.upload(new Float32Array(M * K).fill(1));
    const b = heap.upload(new Float32Array(K * N).fill(2));
    const c = heap.alloc(M * ldc);
    heap.f32.fill(-3, c, c + M * ldc);
    heap.gemm(M, N, K, a, K, 1, b, N, 1, c, ldc);
    for (let i = 0; i < M; i++) for (let j = 0; j < ldc; j++) expect(heap.f32[c + i * ldc + j]).toBe(j < N ? 10 : -3);
  });
});

describe('elementwise kernels', () => {
  const heap = new WasmHeap({ prefer: 'simd', initialMegabytes: 1 });

  it('swiglu matches silu(g)·u to float precision, including large magnitudes', () => {
    const g = [-100, -20, -3.5, -1, -1e-3, 0, 1e-3, 0.5, 2, 7.25, 30, 100, 1.5];
    const n = g.length;
    const x = heap.alloc(2 * n);
    heap.f32.set(g, x);
    heap.f32.set(
      g.map((_, i) => 1 + i / 4),
      x + n,
    );
    heap.swigluRows(x, 1, n, 2 * n, n);
    g.forEach((v, i) => {
      const want = (v / (1 + Math.exp(-v))) * (1 + i / 4);
      expect(Math.abs(heap.f32[x + i] - want)).toBeLessThanOrEqual(2e-6 * Math.max(1, Math.abs(want)));
    });
    heap.release(x);
  });

  it('attendRow computes softmax(scale·q·Kᵀ)·V over strided cache rows', () => {
    const rand = lcg(5);
    for (const [S, hd] of [
      [1, 4],
      [7, 6],
      [13, 40],
      [64, 32],
      [9, 8],
      [17, 64],
      [8, 20],
    ]) {
      const stride = hd + 3;
      const q = heap.upload(Array.from({ length: hd }, rand));
      const k = heap.upload(Array.from({ length: S * stride }, () => 4 * rand()));
      const v = heap.upload(Array.from({ length: S * stride }, rand));
      const scores = heap.alloc(S);
      const out = heap.alloc(hd);
      const scale = 0.7;
      heap.attendRow(q, k, v, S, hd, stride, scale, scores, out);
      const f = heap.f32;
      const logits = Array.from({ length: S }, (_, s) => {
        let dot = 0;
        for (let i = 0; i < hd; i++) dot += f[q + i] * f[k + s * stride + i];
        return dot * scale;
      });
      const m = Math.max(...logits);
      const e = logits.map((z) => Math.exp(z - m));
      const z = e.reduce((a, b) => a + b, 0);
      for (let i = 0; i < hd; i++) {
        let want = 0;
        for (let s = 0; s < S; s++) want += (e[s] / z) * f[v + s * stride + i];
        expect(f[out + i]).toBeCloseTo(want, 5);
      }
      for (const p of [q, k, v, scores, out]) heap.release(p);
    }
  });

  it('softmaxCausalRows normalises the causal prefix of each row and zeroes the rest', () => {
    const n = 3;
    const S = 9;
    const vals = Array.from({ length: n * S }, (_, i) => ((i * 7) % 11) - 5);
    const x = heap.upload(vals);
    heap.softmaxCausalRows(x, n, S, 5, 0.5);
    for (let t = 0; t < n; t++) {
      const valid = 5 + t;
      const row = vals.slice(t * S, t * S + valid).map((v) => v * 0.5);
      const m = Math.max(...row);
      const z = row.reduce((a, v) => a + Math.exp(v - m), 0);
      for (let j = 0; j < S; j++) {
        const want = j < valid ? Math.exp(row[j] - m) / z : 0;
        expect(heap.f32[x + t * S + j]).toBeCloseTo(want, 6);
      }
    }
    heap.release(x);
  });

  it('rmsNormRows normalises each row and applies the weight', () => {
    const n = 7;
    const x = heap.upload([1, 2, 3, 4, 5, 6, 7, -1, 0, 1, 0, -1, 0, 1]);
    const w = heap.upload([1, 1, 1, 1, 1, 1, 2]);
    heap.rmsNormRows(x, x, 2, n, w, 1e-6);
    const r0 = Math.sqrt((1 + 4 + 9 + 16 + 25 + 36 + 49) / 7 + 1e-6);
    expect(heap.f32[x + 6]).toBeCloseTo((7 / r0) * 2, 5);
    expect(heap.f32[x + 7]).toBeCloseTo(-1 / Math.sqrt(4 / 7 + 1e-6), 5);
    heap.release(x);
    heap.release(w);
  });
});

describe('wasm heap', () => {
  it('reuses and coalesces released blocks and survives memory growth', () => {
    const heap = new WasmHeap({ prefer: 'simd', initialMegabytes: 1 });
    const p1 = heap.alloc(1000);
    const p2 = heap.alloc(1000);
    heap.release(p1);
    expect(heap.alloc(500)).toBe(p1);
    const big = heap.alloc(1_000_000, true); // forces growth
    expect(heap.f32[big + 999_999]).toBe(0);
    heap.f32[p2] = 7;
    expect(heap.f32[p2]).toBe(7);
    expect(() => heap.release(12345)).toThrow(/unknown pointer/);
  });
});

describe('generated kernels', () => {
  it('kernels-wasm.generated.ts is up to date with gemm.as', async () => {
    expect(await renderGeneratedModule()).toBe(readFileSync(GENERATED_PATH, 'utf8'));
  }, 120_000);
});
