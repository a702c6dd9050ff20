import { describe, expect, it } from 'vitest';
import { Generator, choiceGenerator } from './random';
import {
  badWordsTokenIds,
  pythonLstrip,
  logSoftmax,
  processLogits,
  resolveSamplingParams,
  sampleNext,
  sampleNextCompact,
  sampledFirstTopLogprobs,
  SAMPLE_HEAD_NATS,
  type CompactLogits,
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

  it("bad_words strip leading whitespace as Python's lstrip(), not JavaScript's trimStart()", () => {
    const tok = new Tokenizer();
    const enc = (s: string) => tok.encode(s);
    // U+001F and U+0085 are whitespace to Python, not to JavaScript.
    expect(badWordsTokenIds(['\u001fab'], enc)).toEqual([[97, 98]]);
    expect(badWordsTokenIds(['\u0085ab'], enc)).toEqual([[97, 98]]);
    // U+FEFF is whitespace to JavaScript, not to Python: it stays part of the word.
    expect(badWordsTokenIds(['\ufeffab'], enc)).toEqual([[0xef, 0xbb, 0xbf, 97, 98]]);
    expect(pythonLstrip('\t\u3000 x ')).toBe('x ');
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

  it('when everything is masked, falls back to the best token allowed_token_ids permits, never another', () => {
    const r = sampleNext(
      L,
      params({ allowedTokenIds: [2, 4], badWordsTokenIds: [[2], [4]] }),
      new SequenceState(),
      new Generator(1),
    );
    expect(r.tokenId).toBe(4);
    const free = sampleNext(
      L,
      params({ badWordsTokenIds: [[0], [1], [2], [3], [4], [5]] }),
      new SequenceState(),
      new Generator(1),
    );
    expect(free.tokenId).toBe(1);
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

/**
 * What lib/inference/llama-cpp.ts reads of a row for a sampled step, computed the way llama.cpp computes it: min_p's
 * cut max + ln p in float32, the listed tokens sorted largest first, the normalisers summed in float32 in id order.
 */
function llamaCppHead(row: Float32Array, temperature: number, cap = Infinity): CompactLogits {
  const f = Math.fround;
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  const depth = SAMPLE_HEAD_NATS * temperature + 0.05;
  const cut = f(max + f(Math.log(f(Math.exp(-depth)))));
  let listed = [...row.keys()].filter((i) => row[i] >= cut).sort((a, b) => row[b] - row[a]);
  // Cut short (CompactLogits allows it: a head read by a top_k): the floor is the first token left out, ties dropped.
  if (listed.length > cap) {
    const floor = row[listed[cap - 1]];
    listed = listed.slice(0, cap).filter((i) => row[i] > floor);
    const logits = Float64Array.from(listed, (i) => row[i]);
    return { ...llamaCppHead(row, temperature), ids: Int32Array.from(listed), logits, floor };
  }
  const sum = (t: number) => {
    const top = f(max / t);
    let z = 0;
    for (const v of row) z = f(z + f(Math.exp(f(f(v / t) - top))));
    return z;
  };
  const logits = Float64Array.from(listed, (i) => row[i]);
  return {
    kind: 'compact',
    ids: Int32Array.from(listed),
    logits,
    floor: Math.min(logits[logits.length - 1], logits[0] - depth + 1e-4 * (1 + Math.abs(logits[0]))),
    z1: sum(1),
    zT: temperature === 1 ? sum(1) : sum(temperature),
    vocab: row.length,
  };
}

describe('sampleNextCompact (the head of the distribution, as llama.cpp reads it)', () => {
  it('picks what sampleNext picks on the full row with the same draw — token, rank, top list — or declines', () => {
    const rng = new Generator(2024);
    // Draws decided from the head, per kind of knobs: top_k reaching below a narrow head cannot be. `bounded`: the
    // same heads without zT (T < 1), whose unread weight is bounded from z1.
    const decided = { common: 0, topK: 0, bounded: 0 };
    const tried = { common: 0, topK: 0, bounded: 0 };
    for (const scale of [1.5, 4, 8])
      for (const temperature of [0.6, 1, 1.4])
        for (const knobs of [
          {},
          { topP: 0.9 },
          { topK: 40 },
          { minP: 0.05 },
          { topP: 0.5, topK: 200 },
        ] as SamplingParams[])
          for (const topLogprobs of [0, 3]) {
            const V = 3000;
            const row = Float32Array.from({ length: V }, () => rng.normal() * scale);
            // Ties at the top and across the cut: they must follow the full row's order.
            row[17] = row[5];
            const params = resolveSamplingParams({ temperature, ...knobs });
            const head = llamaCppHead(row, params.temperature);
            for (let draw = 0; draw < 12; draw++) {
              const seed = rng.nextUint32();
              const full = sampleNext(row, params, new SequenceState(), new Generator(seed), topLogprobs);
              const compact = sampleNextCompact(head, params, new Generator(seed).random(), topLogprobs);
              const kind = knobs.topK ? 'topK' : 'common';
              tried[kind]++;
              if (!compact) continue;
              decided[kind]++;
              expect(compact.tokenId).toBe(full.tokenId);
              expect(compact.rank).toBe(full.rank);
              expect(Math.abs(compact.logprob - full.logprob)).toBeLessThan(1e-4);
              expect(compact.topLogprobs.map((t) => t.tokenId)).toEqual(full.topLogprobs.map((t) => t.tokenId));
              expect(compact.ranked.map((t) => t.tokenId)).toEqual(full.ranked.map((t) => t.tokenId));
            }
            if (temperature >= 1) {
              // Above T = 1 nothing bounds the unread weight from z1: the engine reads zT.
              if (temperature > 1)
                expect(sampleNextCompact({ ...head, zT: null }, params, 0.5, topLogprobs)).toBeNull();
              continue;
            }
            for (let draw = 0; draw < 12; draw++) {
              const seed = rng.nextUint32();
              const full = sampleNext(row, params, new SequenceState(), new Generator(seed), topLogprobs);
              const bounded = sampleNextCompact(
                { ...head, zT: null },
                params,
                new Generator(seed).random(),
                topLogprobs,
              );
              // Counted where the head with zT decides (top_k reaching below a narrow head decides neither way).
              if (sampleNextCompact(head, params, new Generator(seed).random(), topLogprobs)) {
                tried.bounded++;
                if (bounded) decided.bounded++;
              }
              if (!bounded) continue;
              expect([bounded.tokenId, bounded.rank]).toEqual([full.tokenId, full.rank]);
              expect(bounded.ranked.map((t) => t.tokenId)).toEqual(full.ranked.map((t) => t.tokenId));
            }
          }
    // Most draws land in the head: reading every logit stays the exception.
    expect(decided.common / tried.common).toBeGreaterThan(0.95);
    expect(decided.topK / tried.topK).toBeGreaterThan(0.6);
    // The bound from z1 decides nearly every draw that the normaliser at T, read, would have (these rows: 98.5 %).
    expect(decided.bounded / tried.bounded).toBeGreaterThan(0.95);
  });

  it("at Qwen3's vocabulary under top_p: the cut's uncertainty is drawn out, and the head still decides", () => {
    // 151,936 tokens: the unread weight's float32 tolerance is wide enough to leave top_p's cut uncertain by a
    // token or two; the draw is made for each possible cut and decides when they agree. On these rows (seed 11) the
    // cut is uncertain every time: declining then left every draw to the full row (0 of 30 decided).
    const rng = new Generator(11);
    const params = resolveSamplingParams({ temperature: 0.8, topP: 0.95 });
    let decided = 0;
    let decidedBounded = 0;
    for (let r = 0; r < 3; r++) {
      const row = Float32Array.from({ length: 151_936 }, () => rng.normal() * 5);
      const head = llamaCppHead(row, params.temperature);
      for (let d = 0; d < 10; d++) {
        const seed = rng.nextUint32();
        const compact = sampleNextCompact(head, params, new Generator(seed).random(), 0);
        // The same head without the normaliser at T, bounded from z1 (what the engine reads first at T < 1).
        const bounded = sampleNextCompact({ ...head, zT: null }, params, new Generator(seed).random(), 0);
        const expected = sampleNext(row, params, new SequenceState(), new Generator(seed)).tokenId;
        if (bounded) {
          decidedBounded++;
          expect(bounded.tokenId).toBe(expected);
        }
        if (!compact) continue;
        decided++;
        expect(compact.tokenId).toBe(expected);
      }
    }
    expect(decided).toBeGreaterThanOrEqual(27);
    expect(decidedBounded).toBeGreaterThanOrEqual(27);
  });

  it('a head cut short decides under top_k and min_p (every kept token read), not without them', () => {
    const rng = new Generator(5);
    const row = Float32Array.from({ length: 3000 }, () => rng.normal() * 0.5);
    row[100] = row[101] = row[102] = 4; // a tie at the top
    const head = llamaCppHead(row, 1, 64);
    expect(head.ids.length).toBeLessThanOrEqual(64);
    for (const knobs of [{ topK: 20 }, { minP: 0.2 }, { topK: 64 }]) {
      const p = resolveSamplingParams({ temperature: 1, ...knobs });
      for (let seed = 0; seed < 50; seed++) {
        const compact = sampleNextCompact(head, p, new Generator(seed).random(), 2);
        const full = sampleNext(row, p, new SequenceState(), new Generator(seed), 2);
        if (knobs.topK === 64) {
          // The 64th largest may tie with a token left out: only what is certain is decided.
          if (compact) expect(compact.tokenId).toBe(full.tokenId);
          continue;
        }
        expect(compact?.tokenId).toBe(full.tokenId);
        expect(compact?.ranked.map((t) => t.tokenId)).toEqual(full.ranked.map((t) => t.tokenId));
      }
    }
    // Nothing masks the tokens left out: their weight decides, the head cannot.
    expect(sampleNextCompact(head, resolveSamplingParams({ temperature: 1 }), 0.3, 0)).toBeNull();
  });

  it('greedy on the top k + 1 logits: the first largest id on a tie, ranks counting ties, the top list', () => {
    const row = Float32Array.from([1, 5, 3, 5, 0.5, 2]);
    const p = resolveSamplingParams({ temperature: 0 });
    const full = sampleNext(row, p, new SequenceState(), new Generator(1), 2);
    // As the binding's unstable sort may hand them: the tied pair in either order.
    const z1 = [...row].reduce((a, v) => a + Math.exp(v - 5), 0);
    const head: CompactLogits = {
      kind: 'compact',
      ids: Int32Array.from([3, 1, 2]),
      logits: Float64Array.from([5, 5, 3]),
      floor: 3,
      z1,
      zT: z1,
      vocab: 6,
    };
    const compact = sampleNextCompact(head, p, 0, 2)!;
    expect(compact.tokenId).toBe(1);
    expect(compact.rank).toBe(full.rank);
    expect(compact.logprob).toBeCloseTo(full.logprob, 12);
    expect(compact.topLogprobs).toEqual(
      full.topLogprobs.map((t) => ({ ...t, logprob: expect.closeTo(t.logprob, 12) })),
    );
    // k = 0: the argmax alone.
    const alone = sampleNextCompact({ ...head, ids: Int32Array.from([1]), logits: Float64Array.from([5]) }, p, 0, 0)!;
    expect([alone.tokenId, alone.logprob]).toEqual([1, expect.closeTo(full.logprob, 12)]);
  });

  it('declines a draw beyond the head, knobs that reach below what was read, and a top list longer than it', () => {
    // Half the tokens at 0, half 10.2 nats below: the head read for T = 1 (10.05 nats deep) lists the first half.
    const row = Float32Array.from({ length: 100 }, (_, i) => (i >= 50 ? -10.2 : 0));
    const head = llamaCppHead(row, 1);
    expect(head.ids.length).toBe(50);
    const p = resolveSamplingParams({ temperature: 1 });
    // u beyond the mass of the listed tokens (the others hold 3.7e-5 of it): the full walk decides.
    expect(sampleNextCompact(head, p, 1 - 1e-6, 0)).toBeNull();
    expect(sampleNextCompact(head, p, 0.51, 0)?.tokenId).toBe(
      sampleNext(row, p, new SequenceState(), { random: () => 0.51 } as Generator).tokenId,
    );
    // On the edge between two tokens' intervals (which the unread weight's rounding could move): not decided.
    const edge = 25 / (50 + 50 * Math.exp(Math.fround(-10.2)));
    expect(sampleNextCompact(head, p, edge, 0)).toBeNull();
    expect(sampleNextCompact(head, resolveSamplingParams({ temperature: 1, topK: 60 }), 0.5, 0)).toBeNull();
    expect(sampleNextCompact(head, resolveSamplingParams({ temperature: 1, minP: 1e-20 }), 0.5, 0)).toBeNull();
    expect(sampleNextCompact(head, p, 0.5, 51)).toBeNull();
    // A head read for T = 1 cannot serve T = 2 (its cut is not 20 nats deep).
    expect(sampleNextCompact(head, resolveSamplingParams({ temperature: 2 }), 0.5, 0)).toBeNull();
  });
});
