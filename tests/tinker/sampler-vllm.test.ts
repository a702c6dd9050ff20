import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import {
  describeSampleTarget,
  sampleTokens,
  type SampleInput,
  type SampleTarget,
  type TinkerSamplingParams,
} from '@/lib/services/tinker/sampler';
import { putArtifact } from '@/lib/storage';
import { createModel, createUser, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { useBaseModels } from '../support/base-models';
import { fakeLogprob, fakeTokenText, FAKE_MAX_MODEL_LEN, startFakeVllm, type FakeVllm } from '../support/fake-vllm';

/**
 * The Tinker sampler through vLLM's completions API, against the stand-in of tests/support/fake-vllm.ts: the request
 * it sends, how the answer becomes a SampleResult, a checkpoint's adapter loaded once (and shared with chat), and
 * vLLM's refusals and failures as the sampler's errors.
 */
const HF_ID = 'tiny/qwen3-vllm-sampler';
const SERVED = 'Qwen/Qwen3-tiny';
/** A base model the vLLM server does not serve. */
const ELSEWHERE = 'tiny/not-on-this-vllm';
let vllm: FakeVllm;
let user: TestUser;
let adapterDir: string;
const saved = { ...process.env };
const base: SampleTarget = { baseModel: HF_ID, checkpoint: null };
const PROMPT = [101, 102, 103, 104];

function sample(target: SampleTarget, params: TinkerSamplingParams, over: Partial<SampleInput> = {}) {
  return sampleTokens({
    target,
    prompt: PROMPT,
    numSamples: 1,
    params,
    promptLogprobs: false,
    topkPromptLogprobs: 0,
    ...over,
  });
}

const completions = () => vllm.calls.filter((c) => c.endpoint === 'POST /v1/completions');
const loads = () => vllm.calls.filter((c) => c.endpoint === 'POST /v1/load_lora_adapter');

/** A model of the base with a checkpoint at step 1 whose adapter (two files) is in the artifact store. */
async function checkpoint(): Promise<{ target: SampleTarget; name: string }> {
  const model = await createModel(user, { base_model: HF_ID, project: 'vllm' });
  const prefix = `models/${model.id}/checkpoints/1`;
  await putArtifact(
    `${prefix}/adapter_config.json`,
    JSON.stringify({ peft_type: 'LORA', r: 4, lora_alpha: 32, target_modules: ['q_proj', 'v_proj'] }),
  );
  await putArtifact(`${prefix}/adapter_model.safetensors`, new Uint8Array([8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32]));
  const artifactKey = `${prefix}/adapter_model.safetensors`;
  const [row] = await insertCheckpoint(await getDb(), { modelId: model.id, step: 1, metrics: {}, artifactKey });
  return {
    target: { baseModel: HF_ID, checkpoint: { id: row.id, step: 1, artifactKey } },
    name: `${user.handle}/vllm/${model.name}:step1`,
  };
}

beforeAll(async () => {
  useBaseModels([
    { id: HF_ID, backend: 'hf', serve: 'vllm', upstream_model: SERVED },
    { id: ELSEWHERE, backend: 'upstream', upstream_model: 'Not/Served' },
  ]);
  adapterDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-sampler-vllm-adapters-'));
  vllm = await startFakeVllm(SERVED);
  process.env.TUNEBOARD_VLLM_ADAPTER_DIR = adapterDir;
  user = await createUser();
});

beforeEach(() => {
  process.env.TUNEBOARD_UPSTREAM_URL = vllm.url;
});

afterAll(async () => {
  process.env = saved;
  await vllm.close();
});

describe('sampling through vLLM', () => {
  it('describes the target with vLLM’s context (its model list); vLLM checks prompt ids itself', async () => {
    expect(await describeSampleTarget(base)).toEqual({
      servedBy: 'vllm',
      contextLength: FAKE_MAX_MODEL_LEN,
      vocabSize: null,
    });
  });

  it('sends the prompt ids to /v1/completions as specified and maps the answer', async () => {
    const r = await sample(base, { temperature: 0.7, top_p: 0.9, max_tokens: 5, seed: 12 }, { numSamples: 2 });
    expect(completions().at(-1)!.body).toEqual({
      model: SERVED,
      prompt: PROMPT,
      n: 2,
      max_tokens: 5,
      temperature: 0.7,
      top_p: 0.9,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      presence_penalty: 0,
      frequency_penalty: 0,
      seed: 12,
      stop: [],
      stop_token_ids: [],
      include_stop_str_in_output: true,
      skip_special_tokens: false,
      logprobs: 0,
      return_tokens_as_token_ids: true,
      stream: false,
    });
    expect(r.sequences).toHaveLength(2);
    for (const s of r.sequences) {
      expect(s.stop_reason).toBe('length');
      expect(s.tokens).toHaveLength(5);
      expect(s.logprobs).toEqual(s.tokens.map(fakeLogprob));
    }
    expect(r.sequences[0].tokens).not.toEqual(r.sequences[1].tokens);
    expect(r.prompt_logprobs).toBeNull();
    expect(r.topk_prompt_logprobs).toBeNull();
    // Tinker's defaults; no seed (−1 is none, as vLLM reads it); top_k as given.
    await sample(base, { seed: -1, top_k: 7, stop: [] });
    const body = completions().at(-1)!.body;
    expect(body).toMatchObject({
      n: 1,
      max_tokens: FAKE_MAX_MODEL_LEN - PROMPT.length,
      temperature: 1,
      top_p: 1,
      top_k: 7,
    });
    expect(body).not.toHaveProperty('seed');
    expect(body).not.toHaveProperty('prompt_logprobs');
  });

  it('max_tokens unset: the rest of vLLM’s context, sent explicitly (vLLM’s own default is 16)', async () => {
    const prompt = Array.from({ length: FAKE_MAX_MODEL_LEN - 3 }, (_, i) => 10 + (i % 50));
    const r = await sample(base, { seed: 1 }, { prompt });
    expect(completions().at(-1)!.body.max_tokens).toBe(3);
    expect(r.sequences[0]).toMatchObject({ stop_reason: 'length' });
    expect(r.sequences[0].tokens).toHaveLength(3);
  });

  it('greedy samples are one greedy sample repeated (vLLM refuses n > 1 when greedy)', async () => {
    const r = await sample(base, { temperature: 0, max_tokens: 4 }, { numSamples: 3 });
    expect(completions().at(-1)!.body).toMatchObject({ n: 1, temperature: 0 });
    expect(r.sequences).toHaveLength(3);
    expect(r.sequences[1]).toEqual(r.sequences[0]);
    expect(r.sequences[2]).toEqual(r.sequences[0]);
  });

  it('stop token ids and stop strings end a sample with the token that stopped it', async () => {
    const run = (await sample(base, { seed: 4, max_tokens: 8 })).sequences[0].tokens;
    const byId = await sample(base, { seed: 4, max_tokens: 8, stop: [run[2]] });
    expect(completions().at(-1)!.body).toMatchObject({ stop: [], stop_token_ids: [run[2]] });
    expect(byId.sequences[0].stop_reason).toBe('stop');
    expect(byId.sequences[0].tokens).toEqual(run.slice(0, run.indexOf(run[2]) + 1));
    const byText = await sample(base, { seed: 4, max_tokens: 8, stop: fakeTokenText(run[3]) });
    expect(completions().at(-1)!.body).toMatchObject({ stop: [fakeTokenText(run[3])], stop_token_ids: [] });
    expect(byText.sequences[0].stop_reason).toBe('stop');
    expect(byText.sequences[0].tokens).toEqual(run.slice(0, run.indexOf(run[3]) + 1));
  });

  it('prompt logprobs and top-k from vLLM’s per-position dicts', async () => {
    // Position 2's token is rank 2 at its position (previous × 3 + 2), the others are outside the top k.
    const prompt = [7, 40, 122, 5];
    const r = await sample(base, { max_tokens: 1 }, { prompt, promptLogprobs: true, topkPromptLogprobs: 3 });
    expect(completions().at(-1)!.body).toMatchObject({ prompt_logprobs: 3 });
    expect(r.prompt_logprobs).toEqual([null, -3, -1, -3]);
    expect(r.topk_prompt_logprobs).toEqual([
      null,
      [
        [22, -0.5],
        [23, -1],
        [24, -1.5],
      ],
      [
        [121, -0.5],
        [122, -1],
        [123, -1.5],
      ],
      [
        [367, -0.5],
        [368, -1],
        [369, -1.5],
      ],
    ]);
    const plain = await sample(base, { max_tokens: 1 }, { prompt, promptLogprobs: true });
    expect(completions().at(-1)!.body).toMatchObject({ prompt_logprobs: 0 });
    expect(plain.prompt_logprobs).toEqual([null, -3, -3, -3]);
    expect(plain.topk_prompt_logprobs).toBeNull();
  });

  it('a checkpoint samples from its adapter, loaded once under the name chat uses', async () => {
    const { target, name } = await checkpoint();
    const before = loads().length;
    const tuned = await sample(target, { seed: 3, max_tokens: 4 });
    expect(completions().at(-1)!.body.model).toBe(name);
    expect(loads().length).toBe(before + 1);
    expect(loads().at(-1)!.body.lora_name).toBe(name);
    const plain = await sample(base, { seed: 3, max_tokens: 4 });
    expect(tuned.sequences[0].tokens).not.toEqual(plain.sequences[0].tokens);
    await sample(target, { seed: 3, max_tokens: 4 });
    const chat = await routeFetch('http://localhost:3000/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: name, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
    expect(loads().length).toBe(before + 1);
    // vLLM restarted and lost it: loaded again, and the sample goes through.
    vllm.restart();
    const again = await sample(target, { seed: 3, max_tokens: 4 });
    expect(again.sequences).toEqual(tuned.sequences);
    expect(loads().length).toBe(before + 2);
  });

  it('vLLM’s refusals are 400s with its message; its absence or silence a 503', async () => {
    await expect(sample(base, {}, { prompt: [1, 10_000_000] })).rejects.toMatchObject({
      status: 400,
      message: 'The vLLM server refused the sampling request: Token id 10000000 is out of vocabulary',
    });
    // Checked here, before vLLM is asked: the context from its model list, and what needs no model to know.
    const sent = completions().length;
    await expect(sample(base, { max_tokens: FAKE_MAX_MODEL_LEN })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining(`lower max_tokens to at most ${FAKE_MAX_MODEL_LEN - PROMPT.length}`),
    });
    await expect(sample(base, {}, { prompt: [1, -2] })).rejects.toMatchObject({ status: 400 });
    await expect(sample(base, { top_p: 2 })).rejects.toMatchObject({ status: 400 });
    expect(completions().length).toBe(sent);

    await expect(sample({ baseModel: ELSEWHERE, checkpoint: null }, {})).rejects.toMatchObject({
      status: 503,
      message:
        'The model `tiny/not-on-this-vllm` cannot be served right now: the vLLM server does not serve Not/Served.',
    });

    const closed = await startFakeVllm(SERVED);
    await closed.close();
    process.env.TUNEBOARD_UPSTREAM_URL = closed.url;
    await expect(sample(base, {})).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('not reachable'),
    });
    delete process.env.TUNEBOARD_UPSTREAM_URL;
    await expect(sample(base, {})).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('TUNEBOARD_UPSTREAM_URL'),
    });
    await expect(describeSampleTarget(base)).rejects.toMatchObject({ status: 503 });
  });
});
