import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import {
  builtinSequences,
  completionsBody,
  promptLogprobsResult,
  resolveTokenSampling,
  sampleResultFromCompletion,
  type SamplingLimits,
  type TokenSamplingInput,
} from './token-sampling';

const LIMITS: SamplingLimits = { vocabSize: 1000, contextLength: 64, maxLogprobs: 20 };
const input = (over: Partial<TokenSamplingInput> = {}): TokenSamplingInput => ({
  prompt: [1, 2, 3],
  numSamples: 1,
  params: {},
  promptLogprobs: false,
  topkPromptLogprobs: 0,
  ...over,
});

function refusal(over: Partial<TokenSamplingInput>, limits = LIMITS): string {
  try {
    resolveTokenSampling(input(over), limits);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error('expected a refusal');
}

describe('resolveTokenSampling', () => {
  it('applies Tinker’s defaults: temperature 1, top_k off, top_p 1, the rest of the context', () => {
    expect(resolveTokenSampling(input(), LIMITS)).toEqual({
      prompt: [1, 2, 3],
      numSamples: 1,
      maxTokens: 61,
      temperature: 1,
      topK: 0,
      topP: 1,
      seed: null,
      stopStrings: [],
      stopTokenIds: [],
      promptLogprobs: false,
      topkPromptLogprobs: 0,
    });
    // A vLLM that does not report its context: no default to send (its own is 16 tokens).
    expect(refusal({}, { ...LIMITS, contextLength: null })).toBe(
      'sampling_params.max_tokens is required for this model: its vLLM server does not report its context length.',
    );
    expect(
      resolveTokenSampling(input({ params: { max_tokens: 500 } }), { ...LIMITS, contextLength: null }),
    ).toMatchObject({ maxTokens: 500 });
  });

  it('reads stop as strings or token ids, and seeds as 64-bit integers (−1: none)', () => {
    const r = (params: TokenSamplingInput['params']) => resolveTokenSampling(input({ params }), LIMITS);
    expect(r({ stop: 'END' })).toMatchObject({ stopStrings: ['END'], stopTokenIds: [] });
    expect(r({ stop: ['a', 'b', 'a'] })).toMatchObject({ stopStrings: ['a', 'b'], stopTokenIds: [] });
    expect(r({ stop: [5, 9, 5] })).toMatchObject({ stopStrings: [], stopTokenIds: [5, 9] });
    expect(r({ stop: [] })).toMatchObject({ stopStrings: [], stopTokenIds: [] });
    expect(r({ seed: 7 }).seed).toBe(7n);
    expect(r({ seed: -1 }).seed).toBeNull();
    expect(r({ seed: -5 }).seed).toBe(-5n);
    expect(r({ seed: 2 ** 62 }).seed).toBe(2n ** 62n);
    expect(r({ top_k: 0 }).topK).toBe(0);
    expect(r({ top_k: 40, max_tokens: 61 })).toMatchObject({ topK: 40, maxTokens: 61 });
  });

  it('refuses what cannot be sampled, saying what to change', () => {
    expect(refusal({ prompt: [] })).toBe('The prompt is empty: sampling needs at least one prompt token.');
    expect(refusal({ prompt: [1, 1000, -1, 2.5] })).toBe(
      "Prompt token ids must be in the model's vocabulary, 0 to 999: 1000 (position 1), -1 (position 2), 2.5 (position 3).",
    );
    expect(refusal({ prompt: [1, -1] }, { ...LIMITS, vocabSize: null })).toBe(
      'Prompt token ids must be non-negative integers: -1 (position 1).',
    );
    expect(refusal({ numSamples: 0 })).toBe('num_samples must be an integer from 1 to 128, got 0.');
    expect(refusal({ numSamples: 129 })).toMatch(/got 129/);
    expect(refusal({ params: { max_tokens: 0 } })).toBe(
      'sampling_params.max_tokens must be an integer of at least 1, got 0.',
    );
    expect(refusal({ params: { max_tokens: 62 } })).toBe(
      "The prompt has 3 tokens and max_tokens is 62, past the model's context of 64: lower max_tokens to at most 61, or leave it unset for the rest of the context.",
    );
    expect(refusal({ prompt: new Array(64).fill(1) })).toBe(
      "The prompt has 64 tokens and the model's context is 64: no room is left to generate. Shorten the prompt to at most 63 tokens.",
    );
    expect(refusal({ params: { temperature: -1 } })).toMatch(/temperature must be a number of at least 0/);
    expect(refusal({ params: { temperature: Infinity } })).toMatch(/temperature/);
    expect(refusal({ params: { temperature: '1' as unknown as number } })).toMatch(/temperature.*got "1"/);
    expect(refusal({ params: { top_k: -2 } })).toBe(
      'sampling_params.top_k must be -1 (off) or a positive integer, got -2.',
    );
    expect(refusal({ params: { top_k: 1.5 } })).toMatch(/top_k/);
    expect(refusal({ params: { top_p: 0 } })).toBe('sampling_params.top_p must be in (0, 1], got 0.');
    expect(refusal({ params: { top_p: NaN } })).toMatch(/top_p/);
    expect(refusal({ params: { seed: 1.5 } })).toBe('sampling_params.seed must be a 64-bit integer, got 1.5.');
    expect(refusal({ params: { seed: 2 ** 64 } })).toMatch(/seed/);
    expect(refusal({ params: { stop: ['a', ''] } })).toBe('sampling_params.stop cannot contain an empty string.');
    expect(refusal({ params: { stop: [3, 1000] } })).toBe(
      "sampling_params.stop token ids must be in the model's vocabulary, 0 to 999: 1000 (position 1).",
    );
    expect(refusal({ params: { stop: ['a', 3] as unknown as string[] } })).toBe(
      'sampling_params.stop must be a string, a list of strings or a list of token ids.',
    );
    expect(refusal({ topkPromptLogprobs: 21 })).toBe(
      'topk_prompt_logprobs must be an integer from 0 to 20 (TUNEBOARD_MAX_LOGPROBS), got 21.',
    );
    expect(refusal({ topkPromptLogprobs: -1 })).toMatch(/topk_prompt_logprobs/);
  });
});

describe('the built-in engine’s sequences', () => {
  it('one per sample, seeded seed + i by choice, stopping at EOS, the model’s stop ids and the request’s', () => {
    const s = resolveTokenSampling(
      input({ numSamples: 2, params: { seed: 9, stop: [7], temperature: 0.5, top_k: 3 } }),
      LIMITS,
    );
    const seqs = builtinSequences({ ...s, maxTokens: 10 }, 151645, [151643, 151645, 7]);
    expect(seqs).toHaveLength(2);
    expect(seqs.map((q) => [q.seed, q.choice])).toEqual([
      ['9', 0],
      ['9', 1],
    ]);
    expect(seqs[0]).toMatchObject({
      promptTokenIds: [1, 2, 3],
      maxTokens: 10,
      sampling: { temperature: 0.5, topK: 3, topP: 1, stopTokenIds: [7, 151643] },
      stop: [],
      eosTokenId: 151645,
      ignoreEos: false,
      // The text keeps special tokens and the stop string, as the vLLM path asks for: both stop on the same token.
      includeStopStrInOutput: true,
      skipSpecialTokens: false,
      topLogprobs: 0,
    });
  });
});

describe('vLLM’s completions', () => {
  const resolved = (over: Partial<TokenSamplingInput> = {}) =>
    resolveTokenSampling(input(over), { vocabSize: null, contextLength: 4096, maxLogprobs: 20 });

  it('sends a 64-bit seed exactly (JSON numbers would round it)', () => {
    const body = completionsBody('m', resolved({ params: { seed: 2 ** 62 + 2 ** 10 } }));
    expect(body).toContain('"seed":4611686018427388928}');
    expect(JSON.parse(body)).toMatchObject({ model: 'm', prompt: [1, 2, 3], max_tokens: 4093, top_k: -1 });
  });

  const choice = (index: number, tokens: number[], over: Record<string, unknown> = {}) => ({
    index,
    text: '',
    logprobs: { tokens: tokens.map((t) => `token_id:${t}`), token_logprobs: tokens.map((t) => -t / 10) },
    finish_reason: 'length',
    ...over,
  });

  it('maps choices in index order, and prompt logprob dicts to the prompt token’s value and the top k', () => {
    const s = resolved({ numSamples: 2, promptLogprobs: true, topkPromptLogprobs: 2 });
    const prompt_logprobs = [
      null,
      { '2': { logprob: -4, rank: 9 }, '50': { logprob: -0.1, rank: 1 }, '51': { logprob: -0.2, rank: 2 } },
      { '3': { logprob: -0.3, rank: 1 }, '60': { logprob: -1.5, rank: 2 } },
    ];
    const r = sampleResultFromCompletion(
      { choices: [choice(1, [8], { finish_reason: 'stop' }), choice(0, [5, 6], { prompt_logprobs })] },
      s,
    );
    expect(r).toEqual({
      sequences: [
        { stop_reason: 'length', tokens: [5, 6], logprobs: [-0.5, -0.6] },
        { stop_reason: 'stop', tokens: [8], logprobs: [-0.8] },
      ],
      prompt_logprobs: [null, -4, -0.3],
      topk_prompt_logprobs: [
        null,
        [
          [50, -0.1],
          [51, -0.2],
        ],
        [
          [3, -0.3],
          [60, -1.5],
        ],
      ],
    });
  });

  it('throws what is wrong with an answer of another shape', () => {
    const s = resolved();
    expect(() => sampleResultFromCompletion({ choices: [] }, s)).toThrow('expected 1 choices, got 0');
    expect(() => sampleResultFromCompletion({ error: 'x' }, s)).toThrow('got none');
    expect(() => sampleResultFromCompletion({ choices: [choice(0, [1], { finish_reason: 'abort' })] }, s)).toThrow(
      'finished with abort',
    );
    expect(() => sampleResultFromCompletion({ choices: [choice(0, [1], { logprobs: null })] }, s)).toThrow(
      'no token logprobs',
    );
    const named = { ...choice(0, [1]), logprobs: { tokens: ['hello'], token_logprobs: [-1] } };
    expect(() => sampleResultFromCompletion({ choices: [named] }, s)).toThrow('not token_id:N');
    const withPrompt = resolved({ promptLogprobs: true });
    expect(() => sampleResultFromCompletion({ choices: [choice(0, [1])] }, withPrompt)).toThrow('no prompt logprobs');
  });
});

describe('promptLogprobsResult', () => {
  const positions = [
    null,
    {
      token: { tokenId: 4, logprob: -2, tokenText: '', rank: 3 },
      ranked: [
        { tokenId: 9, logprob: -0.5, tokenText: '', rank: 1 },
        { tokenId: 8, logprob: -1, tokenText: '', rank: 2 },
      ],
    },
  ];
  it('gives only what was asked for', () => {
    expect(promptLogprobsResult(positions, { promptLogprobs: false, topkPromptLogprobs: 0 })).toEqual({
      prompt_logprobs: null,
      topk_prompt_logprobs: null,
    });
    expect(promptLogprobsResult(positions, { promptLogprobs: true, topkPromptLogprobs: 0 })).toEqual({
      prompt_logprobs: [null, -2],
      topk_prompt_logprobs: null,
    });
    expect(promptLogprobsResult(positions, { promptLogprobs: false, topkPromptLogprobs: 1 })).toEqual({
      prompt_logprobs: null,
      topk_prompt_logprobs: [null, [[9, -0.5]]],
    });
  });
});
