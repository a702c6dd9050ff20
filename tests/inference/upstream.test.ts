import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as usageRoute from '@/app/v1/usage/route';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { setUpstreamFetch } from '@/lib/inference/upstream';
import { call, createModel, createUser, TEST_BASE_MODEL, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';

/**
 * The upstream is a second instance of this server, reached in-process through its route handlers with its
 * own user and key: it serves `tuneboard/tiny-random`, which the front server knows as the upstream model
 * `acme/big-model`.
 */
const UPSTREAM_ID = 'acme/big-model';
let front: TestUser;
let upstreamUser: TestUser;
const sent: Record<string, unknown>[] = [];
const saved = { ...process.env };

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-upstream-'));
  const file = path.join(dir, 'base-models.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      models: [
        { id: TEST_BASE_MODEL, backend: 'builtin' },
        { id: UPSTREAM_ID, backend: 'upstream', upstream_model: TEST_BASE_MODEL },
      ],
    }),
  );
  front = await createUser();
  upstreamUser = await createUser();
  process.env.TUNEBOARD_BASE_MODELS_FILE = file;
  process.env.TUNEBOARD_UPSTREAM_URL = 'http://upstream.test/v1';
  process.env.TUNEBOARD_UPSTREAM_API_KEY = upstreamUser.key;
  setUpstreamFetch(async (url, init) => {
    sent.push(JSON.parse(String(init?.body)));
    return routeFetch(url, init);
  });
});

afterAll(() => {
  setUpstreamFetch(undefined);
  process.env = saved;
});

const sdk = (user: TestUser) =>
  new OpenAI({ apiKey: user.key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });

describe('upstream backend', () => {
  it('forwards an upstream base model, rewriting model both ways, and records usage in front', async () => {
    const res = await sdk(front).chat.completions.create({
      model: UPSTREAM_ID,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
      seed: 1,
    });
    expect(res.model).toBe(UPSTREAM_ID);
    expect(sent.at(-1)).toMatchObject({ model: TEST_BASE_MODEL, max_tokens: 4 });
    // The same request straight to the upstream instance gives the same answer.
    const direct = await sdk(upstreamUser).chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 4,
      seed: 1,
    });
    expect(res.choices[0].message.content).toBe(direct.choices[0].message.content);
    await new Promise((r) => setTimeout(r, 50));
    const usage = await call(usageRoute, 'GET', '/v1/usage', { key: front.key });
    expect(usage.body.data).toEqual([
      expect.objectContaining({ model: UPSTREAM_ID, requests: 1, completion_tokens: res.usage!.completion_tokens }),
    ]);
  });

  it('passes streams through chunk by chunk with the model name as sent', async () => {
    const stream = await sdk(front).chat.completions.create({
      model: UPSTREAM_ID,
      messages: [{ role: 'user', content: 'stream' }],
      max_tokens: 5,
      stream: true,
    });
    let chunks = 0;
    let sawUsage = false;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.model).toBe(UPSTREAM_ID);
      if (chunk.usage) sawUsage = true;
    }
    expect(chunks).toBeGreaterThan(1);
    // Usage was requested upstream for bookkeeping, but the client did not ask for it.
    expect(sawUsage).toBe(false);
    expect(sent.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('maps a trained checkpoint to its LoRA adapter name, and relays the upstream error unchanged', async () => {
    const model = await createModel(front, { base_model: UPSTREAM_ID, project: 'big', name: 'agent' });
    const db = await getDb();
    await insertCheckpoint(db, { modelId: model.id, step: 1, metrics: {}, artifactKey: `models/${model.id}/adapter` });
    const name = `${front.handle}/big/agent:step1`;
    await expect(
      sdk(front).chat.completions.create({ model: name, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 }),
    ).rejects.toMatchObject({ status: 404, type: 'NotFoundError' });
    expect(sent.at(-1)).toMatchObject({ model: name });
    // Step 0 is the base model itself.
    const base = await sdk(front).chat.completions.create({
      model: `${front.handle}/big/agent:step0`,
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 2,
    });
    expect(base.model).toBe(`${front.handle}/big/agent:step0`);
    expect(sent.at(-1)).toMatchObject({ model: TEST_BASE_MODEL });
  });

  it('still validates requests in front', async () => {
    const before = sent.length;
    await expect(
      sdk(front).chat.completions.create({
        model: UPSTREAM_ID,
        messages: [{ role: 'user', content: 'x' }],
        top_logprobs: 2,
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(sent.length).toBe(before);
  });
});
