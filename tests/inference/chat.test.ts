import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import * as usageRoute from '@/app/v1/usage/route';
import { getDb } from '@/lib/db/client';
import { isDelivering } from '@/lib/db/notifications';
import { checkpoints } from '@/lib/db/schema';
import * as queue from '@/lib/jobs/server/queue';
import { modelsChanged } from '@/lib/services/served-models';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { claimOnly } from '../jobs/claim-only';
import {
  call,
  createModel,
  createUser,
  noticeFromElsewhere,
  TEST_BASE_MODEL,
  until,
  type TestUser,
} from '../support/helpers';
import { fastPathFetch as routeFetch } from '../support/route-fetch';

function client(user: TestUser, extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) {
  return new OpenAI({
    apiKey: user.key,
    baseURL: 'http://localhost:3000/v1',
    fetch: routeFetch,
    maxRetries: 0,
    ...extra,
  });
}

describe('chat completions through the openai SDK', () => {
  it('answers a base model, non-streaming, with token-id logprobs on every choice', async () => {
    const user = await createUser();
    const res = await client(user).chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'Hello there' }],
      max_completion_tokens: 8,
      seed: 42,
    });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe(TEST_BASE_MODEL);
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.choices).toHaveLength(1);
    const choice = res.choices[0];
    expect(['stop', 'length']).toContain(choice.finish_reason);
    expect(choice.logprobs?.content?.length).toBe(res.usage?.completion_tokens);
    expect(choice.logprobs?.content?.[0].token).toMatch(/^token_id:\d+$/);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
  });

  it('is reproducible with a seed, and choice i uses seed + i', async () => {
    const user = await createUser();
    const ask = (seed: number, n = 1) =>
      client(user).chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'Tell me something' }],
        max_tokens: 10,
        temperature: 1,
        seed,
        n,
      });
    const a = await ask(7, 2);
    const b = await ask(7, 2);
    expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content));
    const c = await ask(8);
    expect(c.choices[0].message.content).toBe(a.choices[1].message.content);
  });

  it('streams in vLLM chunk format and the SDK assembles the same text', async () => {
    const user = await createUser();
    const params = {
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user' as const, content: 'Stream please' }],
      max_tokens: 12,
      seed: 3,
      temperature: 0.7,
    };
    const whole = await client(user).chat.completions.create(params);
    const stream = await client(user).chat.completions.create({
      ...params,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0].message.content);
    expect(finish).toBe(whole.choices[0].finish_reason);
    expect(usage).toEqual(
      whole.usage && {
        prompt_tokens: whole.usage.prompt_tokens,
        completion_tokens: whole.usage.completion_tokens,
        total_tokens: whole.usage.total_tokens,
      },
    );
  });

  it('serves a model record by every naming form, and hides it from other users', async () => {
    const user = await createUser();
    const model = await createModel(user, { project: 'agents', name: 'agent-001' });
    const forms = [
      `${user.handle}/agents/agent-001`,
      `${user.handle}/agents/agent-001:step0`,
      `${user.handle}/agents/agent-001:latest`,
      `wandb-artifact:///${user.handle}/agents/agent-001`,
      `wandb-artifact://${user.handle}/agents/agent-001:step0`,
      model.id,
    ];
    for (const name of forms) {
      const res = await client(user).chat.completions.create({
        model: name,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
      });
      expect(res.model).toBe(name);
    }
    const stranger = await createUser();
    await expect(
      client(stranger).chat.completions.create({
        model: forms[0],
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
      }),
    ).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining(`The model \`${forms[0]}\` does not exist.`),
    });
    await expect(
      client(user).chat.completions.create({
        model: `${forms[0]}:step9`,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
      }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('maps each validation failure to a 400 in the OpenAI error envelope', async () => {
    const user = await createUser();
    const sdk = client(user);
    const base = { model: TEST_BASE_MODEL, messages: [{ role: 'user' as const, content: 'x' }] };
    await expect(sdk.chat.completions.create({ ...base, temperature: -1 })).rejects.toMatchObject({
      status: 400,
      type: 'BadRequestError',
      param: 'temperature',
      message: expect.stringContaining('temperature must be non-negative, got -1.0.'),
    });
    await expect(sdk.chat.completions.create({ ...base, n: 2, temperature: 0 })).rejects.toMatchObject({ status: 400 });
    await expect(sdk.chat.completions.create({ ...base, top_logprobs: 3 })).rejects.toMatchObject({ status: 400 });
    await expect(sdk.chat.completions.create({ ...base, max_tokens: 100_000 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("'max_tokens' or 'max_completion_tokens' is too large"),
    });
    await expect(sdk.chat.completions.create({ ...base, model: '' })).rejects.toMatchObject({
      status: 400,
      param: 'model',
    });
    await expect(client({ ...user, key: 'tb_wrong' }).chat.completions.create(base)).rejects.toMatchObject({
      status: 401,
      type: 'AuthenticationError',
    });
  });

  it('records usage per entity, project and model, honouring OpenAI-Project', async () => {
    const user = await createUser();
    await client(user).chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'a' }],
      max_tokens: 3,
    });
    await client(user, { project: `${user.handle}/evals` }).chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'b' }],
      max_tokens: 3,
    });
    // A header naming someone else's entity is ignored, never an error.
    await client(user, { project: 'someone-else/x' }).chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'c' }],
      max_tokens: 3,
    });
    await new Promise((r) => setTimeout(r, 100));
    const usage = await call(usageRoute, 'GET', '/v1/usage', { key: user.key });
    const byProject = Object.fromEntries(
      usage.body.data.map((r: { project: string; requests: number }) => [r.project, r.requests]),
    );
    expect(byProject).toEqual({ inference: 2, evals: 1 });
    expect(usage.body.data[0]).toMatchObject({ entity: user.handle, model: TEST_BASE_MODEL });
    expect(usage.body.data[0].completion_tokens).toBeGreaterThan(0);
  });

  it("bills a trained model's requests to its own project unless the request names another", async () => {
    const user = await createUser();
    const model = await createModel(user, { project: 'agents' });
    const ask = (name: string, project?: string) =>
      client(user, project ? { project } : {}).chat.completions.create({
        model: name,
        messages: [{ role: 'user', content: 'a' }],
        max_tokens: 2,
      });
    await ask(`${user.handle}/agents/${model.name}:step0`);
    await ask(model.id);
    await ask(`${user.handle}/agents/${model.name}`, `${user.handle}/evals`);
    const usage = await call(usageRoute, 'GET', '/v1/usage', { key: user.key });
    const rows = usage.body.data.map((r: { project: string; model: string; requests: number }) => [
      r.project,
      r.model,
      r.requests,
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['agents', `${user.handle}/agents/${model.name}:step0`, 2],
        ['evals', `${user.handle}/agents/${model.name}:step0`, 1],
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it('lists base models and the caller’s trained models for models.list()', async () => {
    const user = await createUser();
    await createModel(user, { project: 'p', name: 'listed' });
    const ids = [];
    for await (const m of client(user).models.list()) ids.push(m.id);
    expect(ids).toContain(TEST_BASE_MODEL);
    expect(ids).toContain(`${user.handle}/p/listed`);
  });

  it('enforces structured outputs: json_schema, json_object, regex and choice always parse and match', async () => {
    const user = await createUser();
    const sdk = client(user);
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 8 },
        age: { type: 'integer', minimum: 0, maximum: 120 },
        tags: { type: 'array', items: { enum: ['a', 'b"c'] }, maxItems: 3 },
      },
      required: ['name', 'age', 'tags'],
      additionalProperties: false,
    };
    for (const seed of [1, 2, 3]) {
      const res = await sdk.chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'A person as JSON' }],
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
        max_tokens: 200,
        temperature: 1,
        seed,
        n: 2,
      });
      for (const choice of res.choices) {
        expect(choice.finish_reason).toBe('stop');
        let value;
        try {
          value = JSON.parse(choice.message.content!);
        } catch (err) {
          throw new Error(`not JSON: ${JSON.stringify(choice.message.content)}: ${String(err)}`);
        }
        expect(Object.keys(value)).toEqual(['name', 'age', 'tags']);
        expect(value.age).toBeGreaterThanOrEqual(0);
        expect(value.age).toBeLessThanOrEqual(120);
        expect([...value.name].length).toBeLessThanOrEqual(8);
        for (const t of value.tags) expect(['a', 'b"c']).toContain(t);
      }
    }
    // A random model wanders; without whitespace it closes its object well within the context.
    const obj = await sdk.chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'json' }],
      max_tokens: 200,
      seed: 5,
      n: 4,
      // @ts-expect-error vLLM extension field
      structured_outputs: { json_object: true, disable_any_whitespace: true },
    });
    const finished = obj.choices.filter((c) => c.finish_reason === 'stop');
    expect(finished.length).toBeGreaterThan(0);
    for (const c of finished) expect(JSON.parse(c.message.content!)).toBeTypeOf('object');
    // Cut by max_tokens, the output is a prefix of valid JSON, as vLLM's would be.
    for (const c of obj.choices.filter((x) => x.finish_reason === 'length'))
      expect(c.message.content!.startsWith('{')).toBe(true);
    const regex = await sdk.chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'a date' }],
      max_tokens: 30,
      seed: 6,
      // @ts-expect-error vLLM extension field
      structured_outputs: { regex: '\\d{4}-(0[1-9]|1[0-2])-[0-2]\\d' },
    });
    expect(regex.choices[0].message.content).toMatch(/^\d{4}-(0[1-9]|1[0-2])-[0-2]\d$/);
    const choice = await sdk.chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'pick' }],
      max_tokens: 10,
      seed: 7,
      // @ts-expect-error vLLM extension field
      structured_outputs: { choice: ['yes', 'no', 'maybe later'] },
    });
    expect(['yes', 'no', 'maybe later']).toContain(choice.choices[0].message.content);
  });

  it('matches current vLLM on the differential probe’s examples (docs/vllm-compat.md)', async () => {
    const user = await createUser();
    const sdk = client(user);
    const ask = (extra: Record<string, unknown>) =>
      sdk.chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'x' }],
        seed: 1,
        ...extra,
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming) as unknown as Promise<Record<string, unknown>>;
    type Choice = { message: { content: string }; finish_reason: string; stop_reason: unknown; token_ids: number[] };
    const first = (r: Record<string, unknown>) => (r.choices as Choice[])[0];
    // A stop id that is also the max_tokens-th token: stop wins over length, and its text is not content.
    const stopId = first(await ask({ max_tokens: 1, allowed_token_ids: [120], stop_token_ids: [120] }));
    expect([stopId.message.content, stopId.finish_reason, stopId.stop_reason]).toEqual(['', 'stop', 120]);
    // An incomplete UTF-8 sequence at the end is held back, never U+FFFD.
    const partial = first(await ask({ max_tokens: 2, allowed_token_ids: [154] }));
    expect([partial.message.content, partial.finish_reason]).toEqual(['', 'length']);
    // A grammar ends only at EOS: the stop id is not one of its terminators.
    const regex = first(
      await ask({
        max_tokens: 8,
        structured_outputs: { regex: 'ab' },
        stop_token_ids: [120],
        return_token_ids: true,
        temperature: 0,
      }),
    );
    expect(regex.token_ids.slice(0, 2)).toEqual([97, 98]);
    expect(regex.token_ids).not.toContain(120);
    expect([regex.message.content, regex.finish_reason, regex.stop_reason]).toEqual(['ab', 'stop', null]);
    // Streamed, an EOS / stop chunk carries content "" (no tool parser), not an empty delta.
    const stream = await sdk.chat.completions.create({
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 1,
      stream: true,
      ...{ allowed_token_ids: [120], stop_token_ids: [120] }, // vLLM extension fields
    });
    const deltas: unknown[] = [];
    for await (const chunk of stream) for (const c of chunk.choices) deltas.push(c.delta);
    expect(deltas.at(-1)).toEqual({ content: '' });
    // JSON whitespace is bounded, so a small schema closes within 48 tokens for every seed.
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 0, maximum: 99 } },
      required: ['ok', 'n'],
    };
    for (const seed of [1, 2, 3, 4]) {
      const res = await sdk.chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'JSON please' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
        max_tokens: 48,
        temperature: 1,
        seed,
      });
      expect(res.choices[0].finish_reason).toBe('stop');
      expect(Object.keys(JSON.parse(res.choices[0].message.content!))).toEqual(['ok', 'n']);
    }
  });

  it('rejects a structured output it cannot enforce with a 400 before generating', async () => {
    const user = await createUser();
    await expect(
      client(user).chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'x' }],
        // @ts-expect-error vLLM extension field
        structured_outputs: { regex: '(?<=a)b' },
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('structured_outputs.regex could not be compiled'),
    });
    // A $ref that is not percent-encoding made the compiler throw a URIError: a 500 until it was caught.
    await expect(
      client(user).chat.completions.create({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'x' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: '#/%ZZ' } } },
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('is not a valid JSON pointer') });
  });
});

describe('trained models from the cache of served models', () => {
  const ask = (user: TestUser, model: string) =>
    client(user).chat.completions.create({ model, messages: [{ role: 'user', content: 'a' }], max_tokens: 1 });

  const requestsOf = async (user: TestUser, model: string) => {
    const usage = await call(usageRoute, 'GET', '/v1/usage', { key: user.key });
    return usage.body.data
      .filter((r: { model: string }) => r.model === model)
      .reduce((n: number, r: { requests: number }) => n + r.requests, 0);
  };

  it('serves a checkpoint from the cache until a notice names its model, then looks again', async () => {
    const user = await createUser();
    const model = await createModel(user, { project: 'cache' });
    const name = `${user.handle}/cache/${model.name}:step0`;
    await ask(user, name);
    // On PostgreSQL nothing is cached until the listener is connected: wait for it, then fill the cache.
    expect(await until(async () => isDelivering(), 5000)).toBe(true);
    await ask(user, name);
    // Deleted behind the services' back (as another process's write looks from here): the cached checkpoint is
    // still served, which shows the cache is in use...
    await (await getDb()).delete(checkpoints).where(eq(checkpoints.modelId, model.id));
    expect((await ask(user, name)).model).toBe(name);
    // ...and the notice drops it at once, without waiting for the entry's time limit.
    await noticeFromElsewhere('tuneboard_models', model.id, () => modelsChanged([model.id]));
    const gone = () =>
      ask(user, name).then(
        () => false,
        (err: { status?: number }) => err.status === 404,
      );
    expect(await until(gone, 2000)).toBe(true);
  });

  it("sees a finished job's checkpoint as the latest at once, and deletions at once", async () => {
    const user = await createUser();
    const model = await createModel(user, { project: 'cache' });
    const label = `${user.handle}/cache/${model.name}`;
    await ask(user, `${label}:latest`);
    await ask(user, model.id);
    await ask(user, `${label}:step0`);
    expect(await requestsOf(user, `${label}:step0`)).toBe(3);

    // A job completes: step 1 is the latest, by name and by id.
    const submitted = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: { model_id: model.id, trajectory_groups: [] },
    });
    const jobId = submitted.body.id as string;
    const worker = `test:${model.id}`;
    expect((await claimOnly(inProcessProtocol(worker), model.id).claim())?.id).toBe(jobId);
    await queue.appendEvents(jobId, worker, [{ type: 'training_started', data: { num_sequences: 0 } }]);
    await queue.completeJob(jobId, worker, { artifactKey: null });
    await ask(user, `${label}:latest`);
    await ask(user, model.id);
    expect(await requestsOf(user, `${label}:step1`)).toBe(2);

    // Step 0 deleted through the API: gone at once, step 1 still served.
    const deleted = await call(checkpointsRoute, 'DELETE', `/v1/preview/models/${model.id}/checkpoints`, {
      key: user.key,
      params: { model_id: model.id },
      body: { steps: [0] },
    });
    expect(deleted.body.deleted_count).toBe(1);
    await expect(ask(user, `${label}:step0`)).rejects.toMatchObject({ status: 404 });
    expect((await ask(user, `${label}:step1`)).model).toBe(`${label}:step1`);

    // The model deleted: every name for it is gone at once.
    const removed = await call(modelRoute, 'DELETE', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(removed.status).toBe(200);
    for (const name of [`${label}:step1`, `${label}:latest`, model.id])
      await expect(ask(user, name)).rejects.toMatchObject({ status: 404 });
  });

  it('keeps a model cached by id for its owner hidden from everyone else, whoever asks first', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const stranger = await createUser();
    // Both callers authenticated already, so that the stranger's lookup is the one under way when the owner's
    // request arrives: the owner must not get the stranger's "no such model".
    await ask(stranger, TEST_BASE_MODEL);
    await ask(user, TEST_BASE_MODEL);
    const [theirs, mine] = await Promise.allSettled([ask(stranger, model.id), ask(user, model.id)]);
    expect(theirs).toMatchObject({ status: 'rejected', reason: { status: 404 } });
    expect(mine).toMatchObject({ status: 'fulfilled', value: { model: model.id } });
    expect((await ask(user, model.id)).model).toBe(model.id);
    await expect(ask(stranger, model.id)).rejects.toMatchObject({ status: 404 });
  });
});
