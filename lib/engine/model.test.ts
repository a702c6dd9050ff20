import { describe, expect, it } from 'vitest';
import {
  Model,
  headDim,
  modelTensorSpecs,
  parameterCount,
  parseModelConfig,
  validateModelConfig,
  type ModelConfig,
} from './model';
import { WasmHeap } from './wasm/heap';

const base: ModelConfig = {
  vocab: 37,
  d_model: 24,
  n_layers: 2,
  n_heads: 4,
  n_kv_heads: 2,
  d_ff: 40,
  ctx: 32,
  rope_theta: 10000,
  norm_eps: 1e-5,
  tie_embeddings: false,
};

/** Straightforward float64 Llama forward (no cache), written from the HF modeling_llama definitions. */
function referenceLogits(model: Model, tokens: number[]): number[][] {
  const c = model.config;
  const hd = headDim(c);
  const W = (name: string) => Array.from(model.getTensor(name));
  const d = c.d_model;
  const T = tokens.length;
  const emb = W('model.embed_tokens.weight');
  let x = tokens.map((t) => emb.slice(t * d, t * d + d));
  const norm = (v: number[], w: number[]) => {
    const ms = v.reduce((s, a) => s + a * a, 0) / v.length;
    return v.map((a, i) => (a / Math.sqrt(ms + c.norm_eps)) * w[i]);
  };
  const lin = (v: number[], w: number[], out: number) =>
    Array.from({ length: out }, (_, j) => v.reduce((s, a, k) => s + a * w[j * v.length + k], 0));
  const rope = (v: number[], pos: number) => {
    const o = v.slice();
    for (let h = 0; h < v.length / hd; h++)
      for (let i = 0; i < hd / 2; i++) {
        const ang = pos / Math.pow(c.rope_theta, (2 * i) / hd);
        const a = v[h * hd + i];
        const b = v[h * hd + i + hd / 2];
        o[h * hd + i] = a * Math.cos(ang) - b * Math.sin(ang);
        o[h * hd + i + hd / 2] = b * Math.cos(ang) + a * Math.sin(ang);
      }
    return o;
  };
  for (let l = 0; l < c.n_layers; l++) {
    const p = `model.layers.${l}`;
    const xn = x.map((v) => norm(v, W(`${p}.input_layernorm.weight`)));
    const q = xn.map((v, t) => rope(lin(v, W(`${p}.self_attn.q_proj.weight`), c.n_heads * hd), t));
    const k = xn.map((v, t) => rope(lin(v, W(`${p}.self_attn.k_proj.weight`), c.n_kv_heads * hd), t));
    const vv = xn.map((v) => lin(v, W(`${p}.self_attn.v_proj.weight`), c.n_kv_heads * hd));
    const att = q.map((qt, t) => {
      const o = new Array<number>(c.n_heads * hd).fill(0);
      for (let h = 0; h < c.n_heads; h++) {
        const g = Math.floor(h / (c.n_heads / c.n_kv_heads));
        const sc: number[] = [];
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += qt[h * hd + i] * k[s][g * hd + i];
          sc.push(dot / Math.sqrt(hd));
        }
        const m = Math.max(...sc);
        const e = sc.map((z) => Math.exp(z - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let s = 0; s <= t; s++) for (let i = 0; i < hd; i++) o[h * hd + i] += (e[s] / z) * vv[s][g * hd + i];
      }
      return o;
    });
    x = x.map((v, t) => {
      const o = lin(att[t], W(`${p}.self_attn.o_proj.weight`), d);
      return v.map((a, i) => a + o[i]);
    });
    const xn2 = x.map((v) => norm(v, W(`${p}.post_attention_layernorm.weight`)));
    x = x.map((v, t) => {
      const gate = lin(xn2[t], W(`${p}.mlp.gate_proj.weight`), c.d_ff);
      const up = lin(xn2[t], W(`${p}.mlp.up_proj.weight`), c.d_ff);
      const h = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
      const o = lin(h, W(`${p}.mlp.down_proj.weight`), d);
      return v.map((a, i) => a + o[i]);
    });
  }
  const head = W(c.tie_embeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  return x.map((v) => lin(norm(v, W('model.norm.weight')), head, c.vocab)).slice(0, T);
}

function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, tol = 2e-4): void {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  expect(worst).toBeLessThanOrEqual(tol);
}

/** Larger-than-init weights so that attention is far from uniform and mistakes show in the logits. */
function sharpen(model: Model, factor: number): void {
  for (const name of model.tensorNames()) {
    if (name.endsWith('norm.weight')) continue;
    model.setTensor(
      name,
      model.getTensor(name).map((v) => v * factor),
    );
  }
}

describe('model config', () => {
  it('names tensors the HF Llama way and counts parameters', () => {
    const names = modelTensorSpecs(base).map((s) => s.name);
    expect(names.slice(0, 4)).toEqual([
      'model.embed_tokens.weight',
      'model.layers.0.input_layernorm.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.k_proj.weight',
    ]);
    expect(names.at(-1)).toBe('lm_head.weight');
    expect(modelTensorSpecs({ ...base, tie_embeddings: true }).at(-1)?.name).toBe('model.norm.weight');
    // embed 37·24 + 2·(24 + 24·24 + 2·12·24 + 24·24 + 24 + 3·40·24) + 24 + 37·24
    expect(parameterCount(base)).toBe(888 + 2 * (24 + 576 + 576 + 576 + 24 + 2880) + 24 + 888);
  });

  it('parses untrusted JSON into a config, rejecting wrong types', () => {
    expect(parseModelConfig(JSON.parse(JSON.stringify({ ...base, extra: 1 })))).toEqual(base);
    expect(() => parseModelConfig(null)).toThrow(/not an object/);
    expect(() => parseModelConfig({ ...base, d_model: '24' })).toThrow(/d_model must be a number/);
    expect(() => parseModelConfig({ ...base, tie_embeddings: 1 })).toThrow(/tie_embeddings/);
    expect(() => parseModelConfig({ ...base, n_layers: 1.5 })).toThrow(/n_layers must be a positive integer/);
  });

  it('rejects inconsistent shapes', () => {
    expect(() => validateModelConfig({ ...base, n_heads: 5 })).toThrow(/divisible by n_heads/);
    expect(() => validateModelConfig({ ...base, n_kv_heads: 3 })).toThrow(/n_kv_heads/);
    expect(() => validateModelConfig({ ...base, d_model: 12, n_heads: 4 })).toThrow(/even/);
    expect(() => validateModelConfig({ ...base, ctx: 0 })).toThrow(/ctx/);
  });
});

describe('model forward', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = Model.create(base, { seed: 7 });
    const b = Model.create(base, { seed: 7 });
    const c = Model.create(base, { seed: 8 });
    expect(a.getTensor('model.layers.1.mlp.up_proj.weight')).toEqual(b.getTensor('model.layers.1.mlp.up_proj.weight'));
    expect(a.getTensor('model.embed_tokens.weight')[0]).not.toBe(c.getTensor('model.embed_tokens.weight')[0]);
    expect(a.getTensor('model.norm.weight')[3]).toBe(1);
    for (const m of [a, b, c]) m.release();
  });

  it.each([
    ['GQA, untied, gemm attention', base, 9],
    ['MHA, tied, loop attention', { ...base, n_kv_heads: 4, tie_embeddings: true }, 3],
  ])('prefill logits match a float64 reference (%s)', (_, config, T) => {
    const model = Model.create(config, { seed: 1 });
    sharpen(model, 6);
    const tokens = Array.from({ length: T }, (_, i) => (i * 11 + 3) % config.vocab);
    const want = referenceLogits(model, tokens);
    const [all] = model.forward([{ tokens }], { allLogits: true });
    expect(all.length).toBe(T * config.vocab);
    expectClose(all, want.flat());
    const [last] = model.forward([{ tokens }]);
    expectClose(last, want[T - 1]);
    model.release();
  });

  it.each([
    ['head dim 6', base],
    ['head dim 40 (SIMD blocks + remainder)', { ...base, d_model: 80, n_heads: 2, n_kv_heads: 1 }],
  ])('incremental decoding with a KV cache reproduces the full prefill (%s)', (_, config) => {
    const model = Model.create(config, { seed: 2 });
    sharpen(model, 6);
    const tokens = [5, 9, 1, 30, 22, 7, 7, 12, 0, 36];
    const [full] = model.forward([{ tokens }], { allLogits: true });
    expectClose(full, referenceLogits(model, tokens).flat());
    const cache = model.newCache();
    const [first] = model.forward([{ tokens: tokens.slice(0, 6), cache }]);
    expectClose(first, full.subarray(5 * base.vocab, 6 * base.vocab));
    for (let t = 6; t < tokens.length; t++) {
      const step = model.decodeStep([cache], [tokens[t]]);
      expectClose(step, full.subarray(t * base.vocab, (t + 1) * base.vocab));
    }
    expect(cache.length).toBe(tokens.length);
    cache.release();
    model.release();
  });

  it('a batched decode step over sequences of different lengths equals each sequence alone', () => {
    const model = Model.create(base, { seed: 3 });
    sharpen(model, 6);
    const prompts = [[1, 2, 3], [4, 5, 6, 7, 8, 9, 10], [11], [12, 13, 14, 15, 16]];
    const caches = prompts.map((p) => {
      const cache = model.newCache(16);
      model.forward([{ tokens: p, cache }]);
      return cache;
    });
    const next = [20, 21, 22, 23];
    const batched = model.decodeStep(caches, next);
    prompts.forEach((p, i) => {
      const [alone] = model.forward([{ tokens: [...p, next[i]] }]);
      expectClose(batched.subarray(i * base.vocab, (i + 1) * base.vocab), alone);
    });
    // A cache clone continues independently of its source.
    const fork = caches[1].clone();
    const a = model.decodeStep([fork], [3]);
    const b = model.decodeStep([caches[1]], [3]);
    expectClose(a, b, 0);
    for (const cache of [...caches, fork]) cache.release();
    model.release();
  });

  it('mixes a prefill and decode steps in one call', () => {
    const model = Model.create(base, { seed: 4 });
    const c1 = model.newCache();
    model.forward([{ tokens: [1, 2], cache: c1 }]);
    const c2 = model.newCache();
    const [dec, pre] = model.forward([
      { tokens: [3], cache: c1 },
      { tokens: [9, 8, 7, 6, 5], cache: c2 },
    ]);
    expectClose(dec, model.forward([{ tokens: [1, 2, 3] }])[0]);
    expectClose(pre, model.forward([{ tokens: [9, 8, 7, 6, 5] }])[0]);
    c1.release();
    c2.release();
    model.release();
  });

  it('rejects out-of-vocabulary tokens and overfull caches', () => {
    const model = Model.create(base, { seed: 5 });
    expect(() => model.forward([{ tokens: [base.vocab] }])).toThrow(RangeError);
    const cache = model.newCache(4);
    model.forward([{ tokens: [1, 2, 3], cache }]);
    expect(() => model.forward([{ tokens: [1, 2], cache }])).toThrow(/kv cache full/);
    expect(cache.length).toBe(3);
    expect(() => model.forward([{ tokens: new Array(33).fill(1) }])).toThrow(/exceeds the context/);
    cache.release();
    model.release();
  });

  it('gives bit-identical logits on separate heaps (determinism across workers)', () => {
    const a = Model.create(base, { seed: 12, heap: new WasmHeap({ prefer: 'simd' }) });
    const b = Model.create(base, { seed: 12, heap: new WasmHeap({ prefer: 'simd' }) });
    const tokens = [3, 1, 4, 1, 5, 9, 2, 6];
    expect(a.forward([{ tokens }], { allLogits: true })[0]).toEqual(b.forward([{ tokens }], { allLogits: true })[0]);
  });

  it('fromTensors rebuilds an identical model', () => {
    const a = Model.create(base, { seed: 6 });
    const b = Model.fromTensors(base, new Map(a.namedTensors().map((t) => [t.name, t.data])));
    expectClose(a.forward([{ tokens: [1, 2, 3] }])[0], b.forward([{ tokens: [1, 2, 3] }])[0], 0);
    expect(() => Model.fromTensors(base, new Map())).toThrow(/missing tensor model.embed_tokens.weight/);
    a.release();
    b.release();
  });
});

describe('kv cache ownership', () => {
  it('rejects a cache of another layout or the same cache twice in a batch', () => {
    const a = Model.create(base, { seed: 1 });
    const b = Model.create({ ...base, n_kv_heads: 4 }, { seed: 1 });
    const cache = b.newCache();
    expect(() => a.forward([{ tokens: [1], cache }])).toThrow(/another model/);
    const own = a.newCache();
    expect(() =>
      a.forward([
        { tokens: [1], cache: own },
        { tokens: [2], cache: own },
      ]),
    ).toThrow(/twice/);
    for (const x of [cache, own]) x.release();
    a.release();
    b.release();
  });
});
