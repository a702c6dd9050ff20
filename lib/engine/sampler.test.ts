import { describe, expect, it } from 'vitest';
import { Generator, choiceGenerator } from './random';
import {
  badWordsTokenIds,
  logSoftmax,
  processLogits,
  resolveSamplingParams,
  sampleNext,
  sampledFirstTopLogprobs,
  SequenceState,
  tokenRank,
  topTokens,
  type SamplingParams,
} from './sampler';
import { Tokenizer } from './tokenizer';

const L = [1, 3, -2, 0.5, 3, -1]; // ids 1 and 4 tie for the maximum
const NEG = -Infinity;

function proc(params: SamplingParams, output: number[] = [], prompt: number[] = [], logits: number[] = L): number[] {
  const state = new SequenceState(prompt);
  for (const t of output) state.append(t);
  return Array.from(processLogits(logits, resolveSamplingParams(params), state));
}

function expectArrayClose(got: number[], want: number[]): void {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    if (!Number.isFinite(want[i])) expect(g).toBe(want[i]);
    else expect(g).toBeCloseTo(want[i], 10);
  });
}

describe('sampler pipeline on fixed logits', () => {
  it('defaults leave the logits untouched', () => {
    expectArrayClose(proc({}), L);
  });

  it('allowed_token_ids masks every other token', () => {
    expectArrayClose(proc({ allowedTokenIds: [0, 3] }), [1, NEG, NEG, 0.5, NEG, NEG]);
  });

  it('bad_words: single tokens always, longer words only after the generated prefix', () => {
    expectArrayClose(proc({ badWordsTokenIds: [[2]] }), [1, 3, NEG, 0.5, 3, -1]);
    // [5, 1]: banned only when the last generated token is 5.
    expectArrayClose(proc({ badWordsTokenIds: [[5, 1]] }, [0, 5]), [1, NEG, -2, 0.5, 3, -1]);
    expectArrayClose(proc({ badWordsTokenIds: [[5, 1]] }, [5, 0]), L);
    // The prompt never completes a prefix.
    expectArrayClose(proc({ badWordsTokenIds: [[5, 1]] }, [], [5]), L);
    expectArrayClose(proc({ badWordsTokenIds: [[3, 5, 4]] }, [3, 5]), [1, 3, -2, 0.5, NEG, -1]);
  });

  it('bad_words encoding keeps the spaced variant only when it is a same-length different token', () => {
    const tok = new Tokenizer();
    // Byte tokens: " ab" is one token longer than "ab", so only the bare form is used.
    expect(badWordsTokenIds(['  ab'], (s) => tok.encode(s))).toEqual([[97, 98]]);
    const fake = (s: string) => (s === 'hi' ? [10, 11] : s === ' hi' ? [12, 11] : [1, 2, 3]);
    expect(badWordsTokenIds(['hi'], fake)).toEqual([
      [10, 11],
      [12, 11],
    ]);
    const sameFirst = (s: string) => (s === 'hi' ? [10, 11] : [10, 13]);
    expect(badWordsTokenIds(['hi'], sameFirst)).toEqual([[10, 11]]);
  });

  it('min_tokens masks stop ids and EOS while the output is short, then stops masking', () => {
    const p = { minTokens: 2, stopTokenIds: [4], eosTokenIds: [5] };
    expectArrayClose(proc(p, [0]), [1, 3, -2, 0.5, NEG, NEG]);
    expectArrayClose(proc(p, [0, 0]), L);
  });

  it('logit_bias adds and clamps to ±100', () => {
    expectArrayClose(proc({ logitBias: { 0: 2, 2: -500 } }), [3, 3, -102, 0.5, 3, -1]);
    expectArrayClose(proc({ logitBias: new Map([[5, 1.5]]) }), [1, 3, -2, 0.5, 3, 0.5]);
  });

  it('repetition penalty divides positive and multiplies negative logits of prompt and output tokens', () => {
    expectArrayClose(proc({ repetitionPenalty: 2 }, [2], [1, 5]), [1, 1.5, -4, 0.5, 3, -2]);
  });

  it('frequency penalty scales with output counts; presence applies once; the prompt is exempt', () => {
    expectArrayClose(proc({ frequencyPenalty: 0.5 }, [1, 1, 3], [0]), [1, 2, -2, 0, 3, -1]);
    expectArrayClose(proc({ presencePenalty: 0.5 }, [1, 1, 3], [0]), [1, 2.5, -2, 0, 3, -1]);
    expectArrayClose(proc({ presencePenalty: -1, frequencyPenalty: 1 }, [2, 2]), [1, 3, -3, 0.5, 3, -1]);
  });

  it('penalties apply before temperature', () => {
    // (3 − 1) / 2 = 1, not 3/2 − 1 = 0.5
    expectArrayClose(proc({ presencePenalty: 1, temperature: 2 }, [1]), [0.5, 1, -1, 0.25, 1.5, -0.5]);
  });

  it('temperature divides; tiny positive temperatures are raised to 0.01; 0 is greedy', () => {
    expectArrayClose(proc({ temperature: 0.5 }), [2, 6, -4, 1, 6, -2]);
    const r = resolveSamplingParams({ temperature: 1e-6 });
    expect([r.temperature, r.greedy]).toEqual([0.01, false]);
    const g = resolveSamplingParams({ temperature: 0, topP: 0.1, topK: 1, minP: 0.5 });
    expect([g.greedy, g.topP, g.topK, g.minP]).toEqual([true, 1, 0, 0]);
  });

  it('min_p masks tokens below min_p × the top probability', () => {
    // p ∝ e^x; threshold 0.1·e^3 → keep x ≥ 3 + ln 0.1 = 0.697
    expectArrayClose(proc({ minP: 0.1 }), [1, 3, NEG, NEG, 3, NEG]);
    expectArrayClose(proc({ minP: 0.05 }), [1, 3, NEG, 0.5, 3, NEG]); // 3 + ln 0.05 = 0.004
  });

  it('top_k keeps the k largest, with ties at the k-th value kept', () => {
    expectArrayClose(proc({ topK: 1 }), [NEG, 3, NEG, NEG, 3, NEG]);
    expectArrayClose(proc({ topK: 3 }), [1, 3, NEG, NEG, 3, NEG]);
    expectArrayClose(proc({ topK: -1 }), L);
    expectArrayClose(proc({ topK: 10 }), L);
  });

  it('top_p masks the low tail whose cumulative probability is ≤ 1 − p, never the top token', () => {
    // probs of L: [.0604, .4459, .0030, .0366, .4459, .0082]; ascending cumsum .0030, .0112, .0478, .1081, …
    expectArrayClose(proc({ topP: 0.9 }), [1, 3, NEG, NEG, 3, NEG]); // .0478 ≤ .1 < .1081
    expectArrayClose(proc({ topP: 0.97 }), [1, 3, NEG, 0.5, 3, NEG]); // .0112 ≤ .03 < .0478
    expectArrayClose(proc({ topP: 0.5 }), [NEG, 3, NEG, NEG, 3, NEG]);
    expectArrayClose(proc({ topP: 1e-9 }), [NEG, 3, NEG, NEG, NEG, NEG]); // tie: the lower id survives
  });

  it('top_p on a large vocabulary equals the ascending (value, −id) walk, ties included', () => {
    const g = new Generator(7);
    for (let trial = 0; trial < 12; trial++) {
      const V = 5000 + trial * 997;
      // Coarse values make ties common, some -inf entries stand for earlier masks.
      const raw = Float32Array.from({ length: V }, () =>
        g.random() < 0.02 ? -Infinity : Math.round(g.normal() * 8) / 4,
      );
      const topP = [0.1, 0.5, 0.9, 0.95, 0.999][trial % 5];
      const got = processLogits(raw, resolveSamplingParams({ temperature: 1, topP }), new SequenceState([]));
      const x = Float64Array.from(raw);
      const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => x[a] - x[b] || b - a);
      let max = -Infinity;
      for (const v of x) max = Math.max(max, v);
      let sum = 0;
      for (const v of x) sum += Math.exp(v - max);
      let cum = 0;
      for (let r = 0; r < V - 1; r++) {
        cum += Math.exp(x[order[r]] - max) / sum;
        if (cum <= 1 - topP) x[order[r]] = -Infinity;
        else break;
      }
      expect(Array.from(got)).toEqual(Array.from(x));
    }
  });

  it('applies min_p, then top_k, then top_p on the tempered logits', () => {
    expectArrayClose(proc({ temperature: 2, minP: 0.2, topK: 2 }), [NEG, 1.5, NEG, NEG, 1.5, NEG]);
    // top_k leaves [1, 3, 3] (p(id 0) = .0634): top_p 0.95 keeps it (.0634 > .05), 0.9 drops it (≤ .1)
    expectArrayClose(proc({ topK: 3, topP: 0.95 }), [1, 3, NEG, NEG, 3, NEG]);
    expectArrayClose(proc({ topK: 3, topP: 0.9 }), [NEG, 3, NEG, NEG, 3, NEG]);
  });
});

describe('sampleNext', () => {
  const params = (p: SamplingParams) => resolveSamplingParams(p);

  it('greedy takes the first argmax after processing', () => {
    const r = sampleNext(L, params({ temperature: 0 }), new SequenceState(), new Generator(1));
    expect(r.tokenId).toBe(1);
    const r2 = sampleNext(L, params({ temperature: 0, logitBias: { 4: 0.1 } }), new SequenceState(), new Generator(1));
    expect(r2.tokenId).toBe(4);
  });

  it('logprobs come from the raw logits, whatever the processing', () => {
    const raw = logSoftmax(L);
    const r = sampleNext(
      L,
      params({ temperature: 0, logitBias: { 2: 100 } }),
      new SequenceState(),
      new Generator(1),
      2,
    );
    expect(r.tokenId).toBe(2);
    expect(r.logprob).toBeCloseTo(raw[2], 12);
    expect(r.logprob).toBeCloseTo(-5.8076, 4);
    expect(r.rank).toBe(6);
    expect(r.topLogprobs.map((t) => t.tokenId)).toEqual([2, 1]);
  });

  it('is deterministic for a seed and follows the distribution', () => {
    const draw = (seed: number) => {
      const rng = new Generator(seed);
      return Array.from({ length: 20 }, () => sampleNext(L, params({}), new SequenceState(), rng).tokenId);
    };
    expect(draw(123)).toEqual(draw(123));
    expect(draw(123)).not.toEqual(draw(124));
    const rng = new Generator(7);
    const counts = new Array(6).fill(0);
    const n = 20000;
    for (let i = 0; i < n; i++) counts[sampleNext(L, params({}), new SequenceState(), rng).tokenId]++;
    const probs = Array.from(logSoftmax(L), Math.exp);
    counts.forEach((c, i) => expect(Math.abs(c / n - probs[i])).toBeLessThan(0.015));
  });

  it('a temperature of 1e-6 samples at 0.01 rather than greedily', () => {
    const close = [0, 0.005];
    const rng = new Generator(3);
    const picks = Array.from(
      { length: 400 },
      () => sampleNext(close, params({ temperature: 1e-6 }), new SequenceState(), rng).tokenId,
    );
    const zeros = picks.filter((t) => t === 0).length;
    // p(0) = 1 / (1 + e^0.5) = 0.3775
    expect(zeros).toBeGreaterThan(110);
    expect(zeros).toBeLessThan(190);
  });

  it('choice generators follow seed + i', () => {
    expect(choiceGenerator(10, 2).nextUint32()).toBe(new Generator(12).nextUint32());
    expect(new Generator(2n ** 63n - 1n).nextUint32()).toBe(new Generator(-(2n ** 63n) - 1n).nextUint32());
    expect(new Generator(0).random()).not.toBe(new Generator(1).random());
  });

  it('falls back to the raw argmax when everything is masked', () => {
    const r = sampleNext(
      L,
      params({ allowedTokenIds: [2], badWordsTokenIds: [[2]] }),
      new SequenceState(),
      new Generator(1),
    );
    expect(r.tokenId).toBe(1);
  });
});

describe('logprob extraction', () => {
  const lp = logSoftmax([0, 2, 1, 2, -1]);

  it('ranks count tokens with a logprob ≥ the token (ties rank worse)', () => {
    expect([0, 1, 2, 3, 4].map((i) => tokenRank(lp, i))).toEqual([4, 2, 3, 2, 5]);
  });

  it('top tokens are best first with ties in id order', () => {
    expect(topTokens(lp, 3).map((t) => t.tokenId)).toEqual([1, 3, 2]);
    expect(topTokens(lp, 9)).toHaveLength(5);
    expect(topTokens(lp, 3)[0].logprob).toBeCloseTo(2 - Math.log(1 + 2 * Math.exp(2) + Math.exp(1) + Math.exp(-1)), 12);
  });

  it('puts the sampled token first unless it is rank 1 (vLLM quirk)', () => {
    expect(sampledFirstTopLogprobs(lp, 1, 3).map((t) => t.tokenId)).toEqual([1, 3, 2]);
    expect(sampledFirstTopLogprobs(lp, 2, 3).map((t) => t.tokenId)).toEqual([2, 1, 3]);
    expect(sampledFirstTopLogprobs(lp, 4, 2).map((t) => t.tokenId)).toEqual([4, 1]);
    expect(sampledFirstTopLogprobs(lp, 3, 1).map((t) => t.tokenId)).toEqual([3]);
    expect(sampledFirstTopLogprobs(lp, 4, 0)).toEqual([]);
  });
});
