import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { generate, type GenerationRequest } from '../generate';
import { Model } from '../model';
import { choiceGenerator } from '../random';
import { defaultTokenizerConfig, Tokenizer, trainBpeMerges } from '../tokenizer';
import { applyTokenMask, compileStructuredOutput, maskHas, type StructuredOutputSpecInput } from './index';

// A real (random, untrained) model: its near-uniform logits are the hardest case for a constraint, since
// nothing but the mask keeps the output on track.
const tok = new Tokenizer(
  trainBpeMerges(['{"name": "a", "n": [1, 2]}, {"ok": true}, "yes", "no"'.repeat(4)], 20, defaultTokenizerConfig()),
);
const model = Model.create(
  {
    vocab: tok.vocabSize,
    d_model: 32,
    n_layers: 1,
    n_heads: 2,
    n_kv_heads: 2,
    d_ff: 64,
    ctx: 768,
    rope_theta: 10000,
    norm_eps: 1e-5,
    tie_embeddings: true,
  },
  { seed: 3 },
);
const IM_END = tok.specialTokenId('<|im_end|>') as number;
const prompt = tok.encode('<|im_start|>user\nGive me JSON<|im_end|>\n<|im_start|>assistant\n');
// Closing punctuation gets a push so that open-ended grammars (json_object) finish within the context.
const closers: Record<string, number> = { 34: 4, 93: 4, 125: 4 };

async function run(spec: StructuredOutputSpecInput, n: number, extra: Partial<GenerationRequest> = {}) {
  const constraint = compileStructuredOutput(spec, tok, [IM_END]);
  return generate(
    model,
    tok,
    Array.from({ length: n }, (_, i) => ({
      promptTokenIds: prompt,
      maxTokens: 700,
      eosTokenId: IM_END,
      sampling: { temperature: 1, logitBias: closers },
      generator: choiceGenerator(11, i),
      constraint,
      topLogprobs: 2,
      ...extra,
    })),
  );
}

describe('constrained generation with a real tiny model', () => {
  it('json schema: every choice parses and validates', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 6 },
        n: { type: 'array', items: { type: 'integer', minimum: -5, maximum: 5 }, maxItems: 4 },
        ok: { type: 'boolean' },
        kind: { enum: ['a"b', 'ü', null] },
      },
      required: ['name', 'n', 'kind'],
    };
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const results = await run({ constraint: { kind: 'json', schema } }, 12);
    for (const r of results) {
      expect(r.finishReason).toBe('stop');
      expect(validate(JSON.parse(r.text))).toBe(true);
      // The stop token is generated and counted, not shown.
      expect(r.tokens[r.tokens.length - 1].tokenId).toBe(IM_END);
    }
  });

  it('json_object: always an object', async () => {
    const results = await run({ constraint: { kind: 'json_object' }, disable_any_whitespace: true }, 8);
    for (const r of results) {
      expect(r.finishReason).toBe('stop');
      const v: unknown = JSON.parse(r.text);
      expect(typeof v === 'object' && v !== null && !Array.isArray(v)).toBe(true);
    }
  });

  it('regex and choice: full matches', async () => {
    for (const r of await run({ constraint: { kind: 'regex', pattern: '[A-Z][a-z]{2,5} (cat|dog)s?' } }, 8)) {
      expect(r.finishReason).toBe('stop');
      expect(r.text).toMatch(/^[A-Z][a-z]{2,5} (cat|dog)s?$/);
    }
    for (const r of await run({ constraint: { kind: 'choice', choices: ['yes', 'no', 'maybe not'] } }, 8)) {
      expect(r.finishReason).toBe('stop');
      expect(['yes', 'no', 'maybe not']).toContain(r.text);
    }
  });

  it('greedy decoding and logprobs follow the constrained distribution (vLLM masks before the sampler)', async () => {
    const spec: StructuredOutputSpecInput = { constraint: { kind: 'choice', choices: ['yes', 'no'] } };
    const [r] = await run(spec, 1, { sampling: { temperature: 0 }, topLogprobs: 5 });
    expect(['yes', 'no']).toContain(r.text);
    // Masked tokens have −∞ logprob: the allowed first tokens share all the probability mass.
    const c = compileStructuredOutput(spec, tok, [IM_END]);
    const allowed = c.allowedTokens(c.initialState);
    const first = r.tokens[0];
    let mass = 0;
    for (const t of first.topLogprobs) {
      expect(maskHas(allowed, t.tokenId) || t.logprob === -Infinity).toBe(true);
      if (t.logprob > -Infinity) mass += Math.exp(t.logprob);
    }
    expect(mass).toBeCloseTo(1, 5);
    expect(first.rank).toBe(1);
  });

  it('min_tokens keeps the sequence going with end tokens only after completion (all else is masked)', async () => {
    const [r] = await run({ constraint: { kind: 'choice', choices: ['no'] } }, 1, { sampling: { minTokens: 5 } });
    expect(r.text).toBe('no');
    expect(r.tokens.length).toBe(5);
    expect(r.tokens.slice(2).every((t) => t.tokenId === IM_END)).toBe(true);
  });

  it('finishes with length when max_tokens cuts the output (no forced completion)', async () => {
    const [r] = await run({ constraint: { kind: 'regex', pattern: 'a{10}' } }, 1, { maxTokens: 3 });
    expect(r.finishReason).toBe('length');
    expect(r.text).toBe('aaa');
  });

  it('constraintAfterTokenId: free until that token is generated, then the grammar (a think block, then the answer)', async () => {
    // `{` stands in for `</think>`: a reasoning model's grammar starts after it (GenerationRequest).
    const [start] = tok.encode('{');
    const spec: StructuredOutputSpecInput = { constraint: { kind: 'regex', pattern: 'yes' } };
    const results = await run(spec, 8, {
      constraintAfterTokenId: start,
      maxTokens: 60,
      sampling: { temperature: 1, logitBias: { ...closers, [start]: 3 } },
    });
    let freeSteps = 0;
    for (const r of results) {
      const ids = r.tokens.map((t) => t.tokenId);
      const at = ids.indexOf(start);
      // Ended (end token or length) before thinking was over: nothing was constrained.
      if (at < 0) continue;
      freeSteps += at;
      expect(r.finishReason).toBe('stop');
      expect(tok.decode(ids.slice(at + 1), { skipSpecialTokens: true })).toBe('yes');
      expect(ids[ids.length - 1]).toBe(IM_END);
    }
    // Most choices reached the start token, after unconstrained steps (the grammar would have allowed only "yes").
    expect(results.filter((r) => r.tokens.some((t) => t.tokenId === start)).length).toBeGreaterThanOrEqual(4);
    expect(freeSteps).toBeGreaterThan(4);
    // Without it, the same requests are "yes" from the first token.
    for (const r of await run(spec, 3, { sampling: { temperature: 1, logitBias: { ...closers, [start]: 3 } } }))
      expect(r.text).toBe('yes');
  });
});

describe('applyTokenMask', () => {
  it('sets disallowed entries to −∞ and leaves the input alone', () => {
    const logits = Float32Array.from({ length: 70 }, (_, i) => i / 10);
    const mask = new Uint32Array(3);
    for (const id of [0, 31, 32, 69]) mask[id >>> 5] |= 1 << (id & 31);
    const out = applyTokenMask(logits, mask);
    for (let i = 0; i < 70; i++) expect(out[i]).toBe([0, 31, 32, 69].includes(i) ? logits[i] : -Infinity);
    expect(logits[5]).toBeCloseTo(0.5);
    expect(maskHas(mask, 31)).toBe(true);
    expect(maskHas(mask, 30)).toBe(false);
  });

  it('matches a bit-by-bit reference at every density, vocabulary size and mask length', () => {
    const rng = choiceGenerator(7, 0);
    for (const V of [1, 31, 32, 33, 64, 261, 1000, 151_669]) {
      const logits = Float32Array.from({ length: V }, () => rng.random());
      // Random bits at several densities, and whole words allowed or not among mostly the other (a grammar's mask
      // over a real vocabulary: runs of token ids).
      const patterns: Array<[string, (i: number) => boolean]> = [
        ...[0, 0.02, 0.3, 0.5, 0.7, 0.98, 1].map((d): [string, (i: number) => boolean] => [
          `${d}`,
          () => rng.random() < d,
        ]),
        ['mostly allowed, 100-token gaps', (i) => i % 400 >= 100],
        ['mostly not, 70-token runs', (i) => i % 400 < 70],
      ];
      for (const [density, allowed] of patterns) {
        for (const words of [Math.ceil(V / 32), Math.floor(V / 32), Math.ceil(V / 32) + 1]) {
          const mask = new Uint32Array(words);
          for (let i = 0; i < V; i++) if (i >>> 5 < words && allowed(i)) mask[i >>> 5] |= 1 << (i & 31);
          // Bits past the vocabulary (a longer mask, the last word's spare bits) name no token.
          if (words > V / 32) mask[words - 1] |= V % 32 && words === Math.ceil(V / 32) ? -1 << (V % 32) : -1;
          const expected = Array.from(logits, (l, i) => (maskHas(mask, i) ? l : -Infinity));
          expect(Array.from(applyTokenMask(logits, mask)), `V=${V} density=${density} words=${words}`).toEqual(
            expected,
          );
          expect(Array.from(applyTokenMask(Array.from(logits), mask, new Float32Array(V)))).toEqual(expected);
        }
      }
    }
  });
});
