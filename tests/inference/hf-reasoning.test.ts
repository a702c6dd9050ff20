import fs from 'node:fs';
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
 * A Qwen3 base model with `reasoning_parser: "qwen3"` (tiny random weights, the real Qwen3 tokenizer) and a
 * checkpoint of it, through /v1/chat/completions and the openai SDK. Random weights never write <think>, so the
 * answer is steered with a regex structured output into the shape a Qwen3 checkpoint answers with, which takes
 * TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING=1 (vLLM's enable_in_reasoning): by default a structured output starts
 * after `</think>` (the last test).
 */
const found = findReferencePython();
const skipReason = 'reason' in found ? found.reason : null;
if (skipReason) console.warn(`[hf-reasoning.test] SKIPPING — ${skipReason}`);

const HF_ID = 'tiny/qwen3-reasoning';
const PLAIN_ID = 'tiny/qwen3-plain';
const ANSWER = '<think>\nI ponder\n</think>\n\nHello';
/** `</think>` in the Qwen3 tokenizer. */
const THINK_END_ID = 151668;
let user: TestUser;
let checkpointName = '';
const saved = { ...process.env };

describe.skipIf(skipReason !== null)(
  `reasoning outputs on the built-in engine${skipReason ? ` — skipped: ${skipReason}` : ''}`,
  () => {
    beforeAll(async () => {
      if ('reason' in found) return;
      const fixtures = hfFixtures(found.python);
      useBaseModels([
        { id: HF_ID, backend: 'hf', path: path.join(fixtures, 'qwen3'), reasoning_parser: 'qwen3' },
        { id: PLAIN_ID, backend: 'hf', path: path.join(fixtures, 'qwen3') },
      ]);
      user = await createUser();
      const model = await createModel(user, { base_model: HF_ID, project: 'think' });
      const prefix = `models/${model.id}/checkpoints/1`;
      for (const f of ['adapter_config.json', 'adapter_model.safetensors']) {
        await putArtifact(`${prefix}/${f}`, fs.readFileSync(path.join(fixtures, 'qwen3-lora', f)));
      }
      await insertCheckpoint(await getDb(), {
        modelId: model.id,
        step: 1,
        metrics: {},
        artifactKey: `${prefix}/adapter_model.safetensors`,
      });
      checkpointName = `${user.handle}/think/${model.name}:step1`;
      process.env.TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING = '1';
    }, 600_000);

    afterAll(() => {
      process.env = saved;
    });

    const sdk = () =>
      new OpenAI({ apiKey: user.key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });
    const ask = (model: string, extra: Record<string, unknown> = {}) => ({
      model,
      messages: [{ role: 'user' as const, content: 'Say hello.' }],
      max_tokens: 20,
      temperature: 0,
      structured_outputs: { regex: ANSWER.replace(/\n/g, '\\n') },
      ...extra,
    });

    it('splits the think block into reasoning and reasoning_content, for the base and its checkpoint', async () => {
      for (const model of [HF_ID, checkpointName]) {
        const r = await sdk().chat.completions.create(ask(model) as OpenAI.ChatCompletionCreateParamsNonStreaming);
        const message = r.choices[0].message as (typeof r.choices)[0]['message'] & Record<string, unknown>;
        expect(message.reasoning, model).toBe('\nI ponder\n');
        expect(message.reasoning_content, model).toBe('\nI ponder\n');
        expect(message.content, model).toBe('\n\nHello');
        // Logprobs and usage still count every generated token, the tags included.
        const tokens = r.choices[0].logprobs!.content!.map((t) => t.token);
        expect(tokens.length).toBe(r.usage!.completion_tokens);
      }
      // The same weights without reasoning_parser answer with the tags in the content, as before.
      const plain = await sdk().chat.completions.create(ask(PLAIN_ID) as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(plain.choices[0].message.content).toBe(ANSWER);
      expect((plain.choices[0].message as unknown as Record<string, unknown>).reasoning).toBeNull();
    }, 300_000);

    it('streams reasoning deltas, then content, never the tags; the SDK stream ends as the whole answer', async () => {
      const stream = await sdk().chat.completions.create({
        ...(ask(HF_ID) as OpenAI.ChatCompletionCreateParamsNonStreaming),
        stream: true,
      });
      let reasoning = '';
      let content = '';
      for await (const chunk of stream) {
        const delta = (chunk.choices[0]?.delta ?? {}) as Record<string, string | undefined>;
        expect(delta.reasoning).toBe(delta.reasoning_content);
        reasoning += delta.reasoning ?? '';
        content += delta.content ?? '';
        if (delta.reasoning) expect(content).toBe('');
      }
      expect(reasoning).toBe('\nI ponder\n');
      expect(content).toBe('\n\nHello');
    }, 300_000);

    it('chat_template_kwargs enable_thinking: false renders the closed think block into the prompt: all content', async () => {
      const r = await sdk().chat.completions.create(
        ask(HF_ID, {
          chat_template_kwargs: { enable_thinking: false },
          structured_outputs: { regex: 'Hi there' },
        }) as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      const message = r.choices[0].message as unknown as Record<string, unknown>;
      expect(message.content).toBe('Hi there');
      expect(message.reasoning).toBeNull();
      // Without the switch the same answer counts as an unclosed think block (vLLM's qwen3 parser).
      const thinking = await sdk().chat.completions.create(
        ask(HF_ID, { structured_outputs: { regex: 'Hi there' } }) as OpenAI.ChatCompletionCreateParamsNonStreaming,
      );
      const m2 = thinking.choices[0].message as unknown as Record<string, unknown>;
      expect(m2.reasoning).toBe('Hi there');
      expect(m2.content).toBeNull();
    }, 300_000);

    it("by default a structured output applies after </think>, as vLLM's grammar does: free reasoning, then the schema", async () => {
      process.env.TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING = '0';
      try {
        for (const stream of [false, true]) {
          // The random weights write </think> now and then when it is pushed up; the grammar waits for it.
          const body = {
            ...(ask(HF_ID, {
              temperature: 1,
              seed: 5,
              max_tokens: 60,
              logit_bias: { [THINK_END_ID]: 10 },
              logprobs: true,
              structured_outputs: { regex: 'Hello' },
            }) as OpenAI.ChatCompletionCreateParamsNonStreaming),
          };
          let reasoning = '';
          let content = '';
          const tokens: string[] = [];
          if (stream) {
            for await (const chunk of await sdk().chat.completions.create({ ...body, stream: true })) {
              const delta = (chunk.choices[0]?.delta ?? {}) as Record<string, string | undefined>;
              reasoning += delta.reasoning ?? '';
              content += delta.content ?? '';
              tokens.push(...(chunk.choices[0]?.logprobs?.content ?? []).map((t) => t.token));
            }
          } else {
            const r = await sdk().chat.completions.create(body);
            const message = r.choices[0].message as unknown as Record<string, string | null>;
            reasoning = message.reasoning ?? '';
            content = message.content ?? '';
            tokens.push(...r.choices[0].logprobs!.content!.map((t) => t.token));
          }
          const end = tokens.indexOf(`token_id:${THINK_END_ID}`);
          // Unconstrained steps came first (the grammar allows only "Hello"), then </think>, then the answer.
          expect(end, tokens.join('|')).toBeGreaterThan(0);
          expect(reasoning.length).toBeGreaterThan(0);
          expect(reasoning).not.toContain('Hello');
          expect(content).toBe('Hello');
        }
      } finally {
        process.env.TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING = '1';
      }
    }, 300_000);
  },
);
