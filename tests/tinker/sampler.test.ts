import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { TINY_MODEL_CONFIG } from '@/lib/engine/base-models';
import { Model } from '@/lib/engine/model';
import { encodeModel } from '@/lib/engine/safetensors';
import { ApiError } from '@/lib/errors';
import { descriptionTokenizer } from '@/lib/inference/backends';
import { builtinModelSource } from '@/lib/catalog/builtin-models';
import {
  describeSampleTarget,
  sampleTokens,
  type SampleInput,
  type SampleTarget,
  type TinkerSamplingParams,
} from '@/lib/services/tinker/sampler';
import { putArtifact } from '@/lib/storage';
import { createModel, createUser, TEST_BASE_MODEL, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';

/**
 * The Tinker sampler on the built-in engine's `tuneboard/tiny-random` (byte-level, context 256): the same tokens as
 * chat for the same prompt ids, vLLM's sampling semantics, logprobs of the raw model, and every refusal.
 */
const BASE: SampleTarget = { baseModel: TEST_BASE_MODEL, checkpoint: null };
const tokenizer = descriptionTokenizer(builtinModelSource(TEST_BASE_MODEL)!);
const PROMPT = tokenizer.encode('Once upon a time');

function sample(params: TinkerSamplingParams, over: Partial<SampleInput> = {}) {
  return sampleTokens({
    target: BASE,
    prompt: PROMPT,
    numSamples: 1,
    params,
    promptLogprobs: false,
    topkPromptLogprobs: 0,
    ...over,
  });
}

let user: TestUser;

/** A chat completion through the route, with the token ids vLLM's `return_token_ids` adds. */
async function chat(body: Record<string, unknown>) {
  const res = await routeFetch('http://localhost:3000/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: TEST_BASE_MODEL, return_token_ids: true, ...body }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    prompt_token_ids: number[];
    prompt_logprobs: (Record<string, { logprob: number }> | null)[] | null;
    choices: { token_ids: number[]; finish_reason: string; logprobs: { content: { logprob: number }[] } }[];
  };
}

/** The error a call fails with (it must fail). */
async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

beforeAll(async () => {
  user = await createUser();
});

describe('sampling on the built-in engine', () => {
  it('describes its target', async () => {
    expect(await describeSampleTarget(BASE)).toEqual({
      servedBy: 'builtin',
      contextLength: TINY_MODEL_CONFIG.ctx,
      vocabSize: TINY_MODEL_CONFIG.vocab,
    });
  });

  it('greedy: the tokens and logprobs chat generates for the same prompt ids', async () => {
    const answer = await chat({ messages: [{ role: 'user', content: 'Hello' }], max_tokens: 12, temperature: 0 });
    const r = await sample({ temperature: 0, max_tokens: 12 }, { prompt: answer.prompt_token_ids });
    const choice = answer.choices[0];
    expect(r.sequences).toHaveLength(1);
    expect(r.sequences[0].tokens).toEqual(choice.token_ids);
    expect(r.sequences[0].stop_reason).toBe(choice.finish_reason);
    r.sequences[0].logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(choice.logprobs.content[i].logprob, 5));
    expect(r.prompt_logprobs).toBeNull();
    expect(r.topk_prompt_logprobs).toBeNull();
  });

  it('seeded sampling repeats; sample i uses seed + i; other seeds differ', async () => {
    const params = { temperature: 1, max_tokens: 16, seed: 11 };
    const a = await sample(params, { numSamples: 3 });
    const b = await sample(params, { numSamples: 3 });
    expect(a.sequences).toEqual(b.sequences);
    expect(a.sequences).toHaveLength(3);
    // Batched with others, a sample's logits differ from its own in the last float bits; the tokens do not.
    const second = (await sample({ ...params, seed: 12 })).sequences[0];
    expect(second.tokens).toEqual(a.sequences[1].tokens);
    second.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(a.sequences[1].logprobs[i], 5));
    const other = await sample({ ...params, seed: 99 });
    expect(other.sequences[0].tokens).not.toEqual(a.sequences[0].tokens);
    expect(new Set(a.sequences.map((s) => s.tokens.join(','))).size).toBeGreaterThan(1);
  });

  it('max_tokens ends with "length"; unset, it is the rest of the context', async () => {
    const r = await sample({ temperature: 1, seed: 3, max_tokens: 5, stop: [] });
    expect(r.sequences[0]).toMatchObject({ stop_reason: 'length' });
    expect(r.sequences[0].tokens).toHaveLength(5);
    expect(r.sequences[0].logprobs).toHaveLength(5);
    // A prompt two tokens short of the context: at most two tokens, whatever is sampled.
    const long = Array.from({ length: TINY_MODEL_CONFIG.ctx - 2 }, (_, i) => PROMPT[i % PROMPT.length]);
    const full = await sample({ temperature: 1, seed: 3 }, { prompt: long });
    expect(full.sequences[0].tokens.length).toBeLessThanOrEqual(2);
    if (full.sequences[0].tokens.length === 2) expect(full.sequences[0].stop_reason).toBe('length');
  });

  // The random model's greedy output repeats one token: the stop tests use a seeded run instead.
  const RUN = { temperature: 1, seed: 21, max_tokens: 24 };

  /** A seeded run and the first position past 2 whose token did not occur before it (a stop there cannot fire earlier). */
  async function seededRun() {
    const run = (await sample(RUN)).sequences[0];
    const at = run.tokens.findIndex((t, i) => i >= 2 && !run.tokens.slice(0, i).includes(t));
    expect(at).toBeGreaterThan(0);
    return { run, at };
  }

  it('a stop token id ends the sample with that token, its logprob included', async () => {
    const { run, at } = await seededRun();
    const r = await sample({ ...RUN, stop: [run.tokens[at]] });
    expect(r.sequences[0]).toEqual({
      stop_reason: 'stop',
      tokens: run.tokens.slice(0, at + 1),
      logprobs: run.logprobs.slice(0, at + 1),
    });
  });

  it('a stop string ends the sample with the token that completed it; nothing is cut', async () => {
    const { run } = await seededRun();
    const text = (n: number) => tokenizer.decode(run.tokens.slice(0, n), { skipSpecialTokens: false });
    // The shortest output whose text is whole (no split character) and longer than the one before it.
    const n = [...run.tokens.keys()]
      .map((i) => i + 1)
      .find((k) => k >= 3 && !text(k).endsWith('\uFFFD') && text(k).length > text(k - 1).length);
    expect(n).toBeDefined();
    const stop = text(n!).slice(-2);
    const first = [...run.tokens.keys()].map((i) => i + 1).find((k) => text(k).includes(stop))!;
    const r = await sample({ ...RUN, stop });
    expect(r.sequences[0].stop_reason).toBe('stop');
    expect(r.sequences[0].tokens).toEqual(run.tokens.slice(0, first));
  });

  it('prompt logprobs: one per prompt token, the first null, as chat reports them; top-k best first', async () => {
    const answer = await chat({
      messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 1,
      temperature: 0,
      prompt_logprobs: 0,
    });
    const prompt = answer.prompt_token_ids;
    const r = await sample({ max_tokens: 1 }, { prompt, promptLogprobs: true, topkPromptLogprobs: 3 });
    expect(r.prompt_logprobs).toHaveLength(prompt.length);
    expect(r.prompt_logprobs![0]).toBeNull();
    prompt.forEach((id, i) => {
      if (i === 0) return;
      expect(r.prompt_logprobs![i]).toBeCloseTo(answer.prompt_logprobs![i]![String(id)].logprob, 5);
    });
    expect(r.topk_prompt_logprobs).toHaveLength(prompt.length);
    expect(r.topk_prompt_logprobs![0]).toBeNull();
    for (let i = 1; i < prompt.length; i++) {
      const top = r.topk_prompt_logprobs![i]!;
      expect(top).toHaveLength(3);
      expect(top[0][1]).toBeGreaterThanOrEqual(top[1][1]);
      expect(top[1][1]).toBeGreaterThanOrEqual(top[2][1]);
      expect(r.prompt_logprobs![i]).toBeLessThanOrEqual(top[0][1] + 1e-9);
    }
    // Only what was asked for.
    const onlyTopk = await sample({ max_tokens: 1 }, { prompt, topkPromptLogprobs: 2 });
    expect(onlyTopk.prompt_logprobs).toBeNull();
    expect(onlyTopk.topk_prompt_logprobs![1]).toEqual(r.topk_prompt_logprobs![1]!.slice(0, 2));
  });

  it('logprobs are the raw model’s (no temperature, top-k or top-p): teacher forcing gives them back', async () => {
    const r = await sample({ temperature: 0.7, top_k: 4, top_p: 0.9, seed: 5, max_tokens: 8 });
    const { tokens, logprobs } = r.sequences[0];
    const forced = await sample({ max_tokens: 1 }, { prompt: [...PROMPT, ...tokens], promptLogprobs: true });
    tokens.forEach((_, i) => expect(forced.prompt_logprobs![PROMPT.length + i]).toBeCloseTo(logprobs[i], 4));
  });

  it('a checkpoint samples from its own weights; step 0 is the base', async () => {
    const model = await createModel(user, { project: 'tinker-sampler' });
    const key = `models/${model.id}/checkpoints/1/model.safetensors`;
    await putArtifact(key, encodeModel(Model.create(TINY_MODEL_CONFIG, { seed: 4242 })));
    const db = await getDb();
    const [ckpt] = await insertCheckpoint(db, { modelId: model.id, step: 1, metrics: {}, artifactKey: key });
    const ask = (target: SampleTarget) =>
      sampleTokens({
        target,
        prompt: PROMPT,
        numSamples: 1,
        params: { max_tokens: 1 },
        promptLogprobs: true,
        topkPromptLogprobs: 0,
      });
    const base = await ask(BASE);
    const tuned = await ask({ baseModel: TEST_BASE_MODEL, checkpoint: { id: ckpt.id, step: 1, artifactKey: key } });
    expect(tuned.prompt_logprobs![1]).not.toBeCloseTo(base.prompt_logprobs![1]!, 3);
    const step0 = await ask({ baseModel: TEST_BASE_MODEL, checkpoint: { id: ckpt.id, step: 0, artifactKey: null } });
    expect(step0.prompt_logprobs).toEqual(base.prompt_logprobs);
    // A checkpoint that no longer exists.
    const gone = { id: '00000000-0000-4000-8000-000000000000', step: 3, artifactKey: key };
    expect((await failure(ask({ baseModel: TEST_BASE_MODEL, checkpoint: gone }))).status).toBe(404);
  });

  it('an abort stops the generation and rejects with its reason', async () => {
    const controller = new AbortController();
    const pending = sample({ temperature: 1, max_tokens: 200 }, { numSamples: 8, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client gone')), 5);
    await expect(pending).rejects.toThrow('client gone');
  });

  it('refuses what it cannot sample: 400s that say what to change, 404, 503', async () => {
    const cases: [Partial<SampleInput> | TinkerSamplingParams, RegExp][] = [
      [{ prompt: [] }, /prompt is empty/],
      [
        { prompt: [1, TINY_MODEL_CONFIG.vocab] },
        new RegExp(`vocabulary, 0 to ${TINY_MODEL_CONFIG.vocab - 1}: ${TINY_MODEL_CONFIG.vocab} \\(position 1\\)`),
      ],
      [{ prompt: [1, -1] }, /vocabulary/],
      [{ prompt: [1, 1.5] }, /vocabulary/],
      [{ numSamples: 0 }, /num_samples must be an integer from 1 to 128, got 0/],
      [{ numSamples: 129 }, /num_samples/],
      [{ topkPromptLogprobs: 21 }, /topk_prompt_logprobs must be an integer from 0 to 20/],
      [{ topkPromptLogprobs: -1 }, /topk_prompt_logprobs/],
      [{ max_tokens: 0 }, /max_tokens must be an integer of at least 1, got 0/],
      [{ max_tokens: TINY_MODEL_CONFIG.ctx }, /lower max_tokens to at most/],
      [{ temperature: -0.5 }, /temperature must be a number of at least 0/],
      [{ top_k: -2 }, /top_k must be -1 \(off\) or a positive integer/],
      [{ top_p: 0 }, /top_p must be in \(0, 1\]/],
      [{ top_p: 1.5 }, /top_p/],
      [{ seed: 0.5 }, /seed must be a 64-bit integer/],
      [{ stop: [''] }, /cannot contain an empty string/],
      [{ stop: [TINY_MODEL_CONFIG.vocab] }, /stop token ids must be in the model's vocabulary/],
      [{ stop: ['a', 1] as unknown as string[] }, /a string, a list of strings or a list of token ids/],
    ];
    for (const [over, message] of cases) {
      const isParams = !('prompt' in over || 'numSamples' in over || 'topkPromptLogprobs' in over);
      const err = await failure(
        isParams ? sample(over as TinkerSamplingParams) : sample({}, over as Partial<SampleInput>),
      );
      expect(err.status, String(message)).toBe(400);
      expect(err.message).toMatch(message);
    }
    const long = Array.from({ length: TINY_MODEL_CONFIG.ctx }, () => PROMPT[0]);
    expect((await failure(sample({}, { prompt: long }))).message).toMatch(/no room is left to generate/);

    const unknown = await failure(sample({}, { target: { baseModel: 'no/such-model', checkpoint: null } }));
    expect(unknown.status).toBe(404);
    await expect(describeSampleTarget({ baseModel: 'no/such-model', checkpoint: null })).rejects.toMatchObject({
      status: 404,
    });
    // An upstream model with no vLLM configured: the chat path's 503, with the reason.
    const down = await failure(
      sample({}, { target: { baseModel: 'meta-llama/Llama-3.1-8B-Instruct', checkpoint: null } }),
    );
    expect(down.status).toBe(503);
    expect(down.message).toMatch(/TUNEBOARD_UPSTREAM_URL/);
  });
});
