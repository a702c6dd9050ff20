import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { Model, type ModelConfig } from '../model';
import { WasmHeap } from '../wasm/heap';
import { AdamW } from './adamw';
import { Trainer } from './trainer';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const tiny = (over: Partial<ModelConfig> = {}): ModelConfig => ({
  vocab: 23,
  d_model: 16,
  n_layers: 2,
  n_heads: 4,
  n_kv_heads: 2,
  d_ff: 24,
  ctx: 16,
  rope_theta: 10000,
  norm_eps: 1e-5,
  tie_embeddings: true,
  ...over,
});

const seqs = [
  [1, 5, 7, 2, 9, 11, 3],
  [4, 4, 8, 22, 0, 13, 6, 17, 5, 1],
  [2, 19],
];
// A fixed, uneven per-token weighting so every position's gradient path matters.
const weights = seqs.map((s, i) =>
  Float32Array.from({ length: s.length - 1 }, (_, t) => -(1 + ((t * 7 + i * 3) % 5)) / 10),
);

function loss(trainer: Trainer): number {
  const scores = trainer.forward(seqs);
  let total = 0;
  scores.forEach((sc, i) => sc.logprobs.forEach((lp, t) => (total += weights[i][t] * lp)));
  return total;
}

describe('Trainer forward/backward', () => {
  for (const variant of [
    { name: 'tied, GQA', config: tiny() },
    { name: 'untied lm_head, MHA', config: tiny({ tie_embeddings: false, n_kv_heads: 4, n_layers: 1 }) },
  ]) {
    it(`matches finite differences for every parameter tensor (${variant.name})`, () => {
      const heap = new WasmHeap({ prefer: 'simd' });
      const model = Model.create(variant.config, { seed: 3, heap });
      // Scale the weights up so the gradients are not all tiny next to float32 rounding.
      for (const name of model.tensorNames()) {
        const t = model.getTensor(name);
        model.setTensor(
          name,
          t.map((x) => (name.endsWith('norm.weight') ? 1 + 0.3 * Math.sin(x * 1e4) : x * 12)),
        );
      }
      const trainer = new Trainer(model);
      trainer.zeroGrad();
      trainer.forward(seqs, { keepActivations: true });
      trainer.backward(weights);
      const f = heap.f32;
      for (const name of model.tensorNames()) {
        const grad = trainer.gradient(name);
        const loc = model.parameterLocation(name);
        // Check the largest-gradient entries plus a spread of others.
        const idx = [...grad.keys()].sort((a, b) => Math.abs(grad[b]) - Math.abs(grad[a])).slice(0, 4);
        for (let k = 0; k < 3; k++) idx.push(Math.floor(((k + 1) * grad.length) / 4.3));
        for (const i of idx) {
          const h = 1e-2;
          const orig = f[loc.ptr + i];
          heap.f32[loc.ptr + i] = orig + h;
          model.invalidatePacked();
          const up = loss(trainer);
          heap.f32[loc.ptr + i] = orig - h;
          const down = loss(trainer);
          heap.f32[loc.ptr + i] = orig;
          const numeric = (up - down) / (2 * h);
          const tol = 2e-3 + 2e-2 * Math.abs(numeric);
          if (Math.abs(numeric - grad[i]) > tol) {
            throw new Error(`${name}[${i}]: analytic ${grad[i]} vs numeric ${numeric}`);
          }
        }
        expect(
          grad.some((g) => g !== 0),
          `${name} has a gradient`,
        ).toBe(true);
      }
      trainer.release();
      model.release();
      expect(heap.liveAllocations).toBe(2); // only the kernel work area and the gemm scratch remain
    });
  }

  it('scores like Model.forward and reports entropy', () => {
    const heap = new WasmHeap();
    const model = Model.create(tiny(), { seed: 5, heap });
    const trainer = new Trainer(model);
    const [scores] = trainer.forward([seqs[1]]);
    const logits = model.forward([{ tokens: seqs[1] }], { allLogits: true })[0];
    const V = model.config.vocab;
    for (let t = 0; t < seqs[1].length - 1; t++) {
      const row = logits.subarray(t * V, (t + 1) * V);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
      expect(scores.logprobs[t]).toBeCloseTo(row[seqs[1][t + 1]] - lse, 4);
      const p = row.map((x) => Math.exp(x - lse));
      const h = -p.reduce((a, pi) => a + (pi > 0 ? pi * Math.log(pi) : 0), 0);
      expect(scores.entropy[t]).toBeCloseTo(h, 4);
    }
    trainer.release();
    model.release();
  });

  it('AdamW with clipping lowers a loss and reports the pre-clip norm', () => {
    const heap = new WasmHeap();
    const model = Model.create(tiny(), { seed: 7, heap });
    const trainer = new Trainer(model);
    const opt = new AdamW(trainer, { weightDecay: 0.01, maxGradNorm: 0.5 });
    const first = loss(trainer);
    let norm = 0;
    for (let i = 0; i < 20; i++) {
      trainer.zeroGrad();
      trainer.forward(seqs, { keepActivations: true });
      trainer.backward(weights);
      const expected = trainer.gradNorm();
      norm = opt.step(1e-2);
      expect(norm).toBeCloseTo(expected, 6);
    }
    expect(norm).toBeGreaterThan(0);
    expect(loss(trainer)).toBeLessThan(first - 0.5);
    opt.release();
    trainer.release();
    model.release();
  });

  it('AdamW matches a scalar reference update', () => {
    const heap = new WasmHeap({ prefer: 'simd' });
    const model = Model.create(tiny({ n_layers: 1 }), { seed: 1, heap });
    const trainer = new Trainer(model);
    const opt = new AdamW(trainer, { weightDecay: 0.1, beta2: 0.99 });
    const name = 'model.layers.0.mlp.up_proj.weight';
    const w0 = model.getTensor(name);
    const g = trainer.grads.get(name)!;
    heap.f32.fill(0.5, g.ptr, g.ptr + g.size);
    opt.step(0.01);
    const w1 = model.getTensor(name);
    // t = 1: m̂ = g, v̂ = g², so the step is lr·g/(|g| + eps) = lr; decay first: w·(1 − lr·wd).
    for (let i = 0; i < 5; i++) expect(w1[i]).toBeCloseTo(w0[i] * (1 - 0.001) - 0.01, 6);
    opt.release();
    trainer.release();
    model.release();
  });
});
