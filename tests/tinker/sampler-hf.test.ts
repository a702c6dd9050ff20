import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { findReferencePython, hfFixtures } from '../engine/hf-fixtures';
import { createModel, createUser, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { useBaseModels } from '../support/base-models';

/**
 * The Tinker sampler on a Hugging Face model served by the built-in engine (tiny random Qwen3 with the real Qwen3
 * tokenizer, context 256) and on a checkpoint that is a PEFT adapter written by Python: the same tokens and
 * logprobs as chat for the same prompt ids, and the adapter's logits, not the base's.
 */
const found = findReferencePython();
const skipReason = 'reason' in found ? found.reason : null;
if (skipReason) console.warn(`[sampler-hf.test] SKIPPING — ${skipReason}`);

const HF_ID = 'tiny/qwen3-sampler';
const VOCAB = 151669;
let user: TestUser;
let modelName = '';
let tuned: SampleTarget;
const base: SampleTarget = { baseModel: HF_ID, checkpoint: null };
const saved = { ...process.env };

function sample(target: SampleTarget, prompt: number[], params: TinkerSamplingParams, over: Partial<SampleInput> = {}) {
  return sampleTokens({ target, prompt, numSamples: 1, params, promptLogprobs: false, topkPromptLogprobs: 0, ...over });
}

/** A greedy chat completion through the route, with its prompt and output token ids and prompt logprobs. */
async function chatGreedy(model: string, maxTokens: number) {
  const res = await routeFetch('http://localhost:3000/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Say something.' }],
      max_tokens: maxTokens,
      temperature: 0,
      return_token_ids: true,
      prompt_logprobs: 0,
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    prompt_token_ids: number[];
    prompt_logprobs: (Record<string, { logprob: number }> | null)[];
    choices: { token_ids: number[]; finish_reason: string; logprobs: { content: { logprob: number }[] } }[];
  };
}

describe.skipIf(skipReason !== null)(
  `the Tinker sampler on a Hugging Face model${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  () => {
    beforeAll(async () => {
      if ('reason' in found) return;
      const fixtures = hfFixtures(found.python);
      useBaseModels([{ id: HF_ID, backend: 'hf', path: path.join(fixtures, 'qwen3') }]);
      user = await createUser();
      const model = await createModel(user, { base_model: HF_ID, project: 'hf' });
      const prefix = `models/${model.id}/checkpoints/1`;
      for (const f of ['adapter_config.json', 'adapter_model.safetensors'])
        await putArtifact(`${prefix}/${f}`, fs.readFileSync(path.join(fixtures, 'qwen3-lora', f)));
      const artifactKey = `${prefix}/adapter_model.safetensors`;
      const [ckpt] = await insertCheckpoint(await getDb(), { modelId: model.id, step: 1, metrics: {}, artifactKey });
      tuned = { baseModel: HF_ID, checkpoint: { id: ckpt.id, step: 1, artifactKey } };
      modelName = `${user.handle}/hf/${model.name}`;
    }, 600_000);

    afterAll(() => {
      process.env = saved;
    });

    it('describes the model: the tokenizer’s vocabulary, the served context', async () => {
      expect(await describeSampleTarget(base)).toEqual({ servedBy: 'builtin', contextLength: 256, vocabSize: VOCAB });
      expect(await describeSampleTarget(tuned)).toEqual({ servedBy: 'builtin', contextLength: 256, vocabSize: VOCAB });
    });

    it('greedy on the base and on the checkpoint: chat’s tokens, logprobs and prompt logprobs for the same ids', async () => {
      for (const [target, model] of [
        [base, HF_ID],
        [tuned, `${modelName}:step1`],
      ] as const) {
        const answer = await chatGreedy(model, 8);
        const prompt = answer.prompt_token_ids;
        const r = await sample(target, prompt, { temperature: 0, max_tokens: 8 }, { promptLogprobs: true });
        const choice = answer.choices[0];
        expect(r.sequences[0].tokens).toEqual(choice.token_ids);
        expect(r.sequences[0].stop_reason).toBe(choice.finish_reason);
        r.sequences[0].logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(choice.logprobs.content[i].logprob, 4));
        expect(r.prompt_logprobs![0]).toBeNull();
        prompt.forEach((id, i) => {
          if (i > 0) expect(r.prompt_logprobs![i]).toBeCloseTo(answer.prompt_logprobs[i]![String(id)].logprob, 4);
        });
      }
    }, 300_000);

    it('the checkpoint’s adapter changes the logits; its samples’ logprobs are its own under teacher forcing', async () => {
      const prompt = (await chatGreedy(HF_ID, 1)).prompt_token_ids;
      const ask = (target: SampleTarget) =>
        sample(target, prompt, { max_tokens: 1 }, { promptLogprobs: true, topkPromptLogprobs: 4 });
      const [b, t] = [await ask(base), await ask(tuned)];
      const differs = prompt
        .slice(1)
        .some((_, i) => Math.abs(b.prompt_logprobs![i + 1]! - t.prompt_logprobs![i + 1]!) > 1e-3);
      expect(differs).toBe(true);
      for (let i = 1; i < prompt.length; i++) {
        const top = t.topk_prompt_logprobs![i]!;
        expect(top).toHaveLength(4);
        for (const [id] of top) expect(id).toBeLessThan(VOCAB);
        expect(top.map(([, lp]) => lp)).toEqual([...top.map(([, lp]) => lp)].sort((x, y) => y - x));
      }
      const s = await sample(
        tuned,
        prompt,
        { temperature: 0.8, top_p: 0.95, seed: 9, max_tokens: 6 },
        { numSamples: 2 },
      );
      for (const seq of s.sequences) {
        const forced = await sample(tuned, [...prompt, ...seq.tokens], { max_tokens: 1 }, { promptLogprobs: true });
        seq.tokens.forEach((_, i) =>
          expect(forced.prompt_logprobs![prompt.length + i]).toBeCloseTo(seq.logprobs[i], 3),
        );
      }
    }, 300_000);

    it('refuses ids outside the 151k vocabulary, in the prompt and in stop', async () => {
      await expect(sample(base, [1, VOCAB], {})).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining(`0 to ${VOCAB - 1}: ${VOCAB} (position 1)`),
      });
      await expect(sample(base, [1, 2], { stop: [VOCAB + 5] })).rejects.toMatchObject({ status: 400 });
    });
  },
);
