import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { putArtifact } from '@/lib/storage';
import { findReferencePython, hfFixtures } from '../engine/hf-fixtures';
import { createModel, createUser, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { useBaseModels } from '../support/base-models';

/**
 * A Hugging Face base model (tiny random Qwen3, the real Qwen3 tokenizer) and a checkpoint that is a PEFT
 * adapter, served by the built-in engine through /v1/chat/completions: logprobs, n, seeds, stop strings and
 * structured outputs, and the adapter changes the answer.
 */
const found = findReferencePython();
const skipReason = 'reason' in found ? found.reason : null;
if (skipReason) console.warn(`[hf-chat.test] SKIPPING — ${skipReason}`);

const HF_ID = 'tiny/qwen3-builtin';
/** The same weights with sampling defaults in generation_config.json (vLLM's `--generation-config auto`). */
const HF_GEN_ID = 'tiny/qwen3-generation-config';
let user: TestUser;
let modelName = '';
const saved = { ...process.env };

describe.skipIf(skipReason !== null)(
  `Hugging Face models on the built-in engine${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  () => {
    beforeAll(async () => {
      if ('reason' in found) return;
      const fixtures = hfFixtures(found.python);
      const withDefaults = fs.mkdtempSync(path.join(os.tmpdir(), 'tuneboard-genconfig-'));
      fs.cpSync(path.join(fixtures, 'qwen3'), withDefaults, { recursive: true });
      const gen = JSON.parse(fs.readFileSync(path.join(withDefaults, 'generation_config.json'), 'utf8'));
      // top_k 50 is transformers' own default, which vLLM's to_diff_dict() drops: it must not turn top-k on.
      const defaults = { ...gen, temperature: 0, max_new_tokens: 3, top_k: 50 };
      fs.writeFileSync(path.join(withDefaults, 'generation_config.json'), JSON.stringify(defaults));
      useBaseModels([
        { id: HF_ID, backend: 'hf', path: path.join(fixtures, 'qwen3') },
        { id: HF_GEN_ID, backend: 'hf', path: withDefaults },
      ]);
      user = await createUser();
      const model = await createModel(user, { base_model: HF_ID, project: 'hf' });
      const db = await getDb();
      const prefix = `models/${model.id}/checkpoints/1`;
      for (const f of ['adapter_config.json', 'adapter_model.safetensors']) {
        await putArtifact(`${prefix}/${f}`, fs.readFileSync(path.join(fixtures, 'qwen3-lora', f)));
      }
      await insertCheckpoint(db, {
        modelId: model.id,
        step: 1,
        metrics: {},
        artifactKey: `${prefix}/adapter_model.safetensors`,
      });
      modelName = `${user.handle}/hf/${model.name}`;
    }, 600_000);

    afterAll(() => {
      process.env = saved;
    });

    const sdk = () =>
      new OpenAI({ apiKey: user.key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'Say something.' }];

    it('answers with logprobs from the base and from a checkpoint (its adapter changes them)', async () => {
      const ask = (model: string) =>
        sdk().chat.completions.create({
          model,
          messages,
          max_tokens: 6,
          temperature: 0,
          logprobs: true,
          top_logprobs: 3,
        });
      const base = await ask(HF_ID);
      const tuned = await ask(`${modelName}:step1`);
      for (const r of [base, tuned]) {
        const lp = r.choices[0].logprobs!.content!;
        expect(lp.length).toBeGreaterThan(0);
        for (const t of lp) {
          expect(t.logprob).toBeLessThanOrEqual(0);
          expect(t.top_logprobs.length).toBe(3);
          // Greedy: the chosen token is the most likely one.
          expect(t.logprob).toBeCloseTo(t.top_logprobs[0].logprob, 5);
        }
        expect(r.usage!.prompt_tokens).toBeGreaterThan(5);
      }
      const first = (r: typeof base) => r.choices[0].logprobs!.content![0].logprob;
      expect(first(base)).not.toBeCloseTo(first(tuned), 3);
      // Step 0 is the base itself.
      const step0 = await ask(`${modelName}:step0`);
      expect(step0.choices[0].message.content).toBe(base.choices[0].message.content);
    }, 300_000);

    it('n choices with a seed repeat exactly; stop strings cut the text', async () => {
      const ask = () =>
        sdk().chat.completions.create({
          model: `${modelName}:step1`,
          messages,
          max_tokens: 8,
          n: 2,
          seed: 7,
          temperature: 1,
        });
      const a = await ask();
      const b = await ask();
      expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content));
      expect(a.choices).toHaveLength(2);
      const text = a.choices[0].message.content ?? '';
      if (text.length >= 3) {
        const stop = text.slice(1, 3);
        const c = await sdk().chat.completions.create({
          model: `${modelName}:step1`,
          messages,
          max_tokens: 8,
          n: 2,
          seed: 7,
          temperature: 1,
          stop: [stop],
        });
        expect(c.choices[0].message.content).toBe(text.slice(0, text.indexOf(stop)));
        expect(c.choices[0].finish_reason).toBe('stop');
      }
    }, 300_000);

    it("applies generation_config.json's sampling defaults to what a request leaves unset", async () => {
      const ask = (over: Record<string, unknown>) =>
        sdk().chat.completions.create({ model: HF_GEN_ID, messages, ...over });
      // max_new_tokens caps the default and the client's max_tokens alike (vLLM ≥ 0.11).
      for (const over of [{}, { max_tokens: 10 }]) {
        const r = await ask(over);
        expect(r.usage!.completion_tokens).toBe(3);
        expect(r.choices[0].finish_reason).toBe('length');
      }
      // temperature 0 from the file: greedy whatever the seed; the request's own temperature wins over it.
      const text = async (over: Record<string, unknown>) => (await ask(over)).choices[0].message.content;
      expect(await text({ seed: 1 })).toBe(await text({ seed: 2 }));
      expect(await text({ seed: 1 })).toBe(await text({ seed: 1, temperature: 0 }));
      const sampled = await Promise.all([1, 2, 3].map((seed) => text({ seed, temperature: 1 })));
      expect(new Set(sampled).size).toBeGreaterThan(1);
    }, 300_000);

    it('structured outputs hold over the 151k-token vocabulary', async () => {
      const r = await sdk().chat.completions.create({
        model: HF_ID,
        messages,
        max_tokens: 24,
        temperature: 0,
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'pick',
            schema: {
              type: 'object',
              properties: { a: { enum: ['yes', 'no'] } },
              required: ['a'],
              additionalProperties: false,
            },
          },
        },
      });
      const text = r.choices[0].message.content ?? '';
      if (r.choices[0].finish_reason === 'stop') expect(['yes', 'no']).toContain((JSON.parse(text) as { a: string }).a);
      else expect(text.startsWith('{')).toBe(true);
      const choice = await sdk().chat.completions.create({
        model: HF_ID,
        messages,
        max_tokens: 10,
        temperature: 0,
        // @ts-expect-error vLLM's extension
        structured_outputs: { choice: ['alpha', 'beta'] },
      });
      expect(['alpha', 'beta']).toContain(choice.choices[0].message.content);
    }, 300_000);
  },
);
