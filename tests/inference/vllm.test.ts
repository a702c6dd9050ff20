import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import S3rver from 's3rver';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as modelsListRoute from '@/app/v1/models/route';
import * as baseModelsRoute from '@/app/v1/preview/base-models/route';
import * as usageRoute from '@/app/v1/usage/route';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { openAiModelListSchema } from '@/lib/schemas/openai-models';
import { vllmAdapters } from '@/lib/services/vllm-adapters';
import { putArtifact } from '@/lib/storage';
import { call, createModel, createUser, TEST_BASE_MODEL, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { startFakeVllm, type FakeVllm } from '../support/fake-vllm';

/**
 * Serving through vLLM, against a stand-in that implements vLLM's runtime LoRA API (tests/support/fake-vllm.ts):
 * an `hf` base model with `serve: "vllm"`, its checkpoints as PEFT adapters in the artifact store, loaded into
 * vLLM from a shared folder before their first request and unloaded least-recently-used within --max-loras.
 */
const HF_ID = 'tiny/qwen3-hf';
const DOWN_ID = 'tiny/builtin-served-hf';
let vllm: FakeVllm;
let user: TestUser;
let adapterDir: string;
const saved = { ...process.env };

function writeTinyHfDir(dir: string) {
  // Only what the listing reads: config.json and a safetensors header (a 2x3 and a 4-element tensor).
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'config.json'),
    JSON.stringify({ model_type: 'qwen3', max_position_embeddings: 40960 }),
  );
  const header = Buffer.from(
    JSON.stringify({
      __metadata__: { format: 'pt' },
      a: { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] },
      b: { dtype: 'F32', shape: [4], data_offsets: [24, 40] },
    }),
  );
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, header, Buffer.alloc(40)]));
}

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-vllm-'));
  writeTinyHfDir(path.join(dir, 'qwen3'));
  const file = path.join(dir, 'base-models.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      models: [
        { id: TEST_BASE_MODEL, backend: 'builtin' },
        { id: HF_ID, backend: 'hf', path: 'qwen3', serve: 'vllm', upstream_model: 'Qwen/Qwen3-tiny' },
        { id: DOWN_ID, backend: 'hf', path: 'qwen3' },
      ],
    }),
  );
  adapterDir = path.join(dir, 'adapters');
  vllm = await startFakeVllm('Qwen/Qwen3-tiny');
  process.env.TUNEBOARD_BASE_MODELS_FILE = file;
  process.env.TUNEBOARD_BASE_MODELS_DIR = dir;
  process.env.TUNEBOARD_UPSTREAM_URL = vllm.url;
  process.env.TUNEBOARD_VLLM_ADAPTER_DIR = adapterDir;
  process.env.TUNEBOARD_VLLM_MAX_LORAS = '2';
  user = await createUser();
});

beforeEach(() => {
  vllm.options.runtimeUpdating = true;
  process.env.TUNEBOARD_UPSTREAM_URL = vllm.url;
  process.env.TUNEBOARD_VLLM_ADAPTER_DIR = adapterDir;
});

afterAll(async () => {
  process.env = saved;
  await vllm.close();
});

const sdk = () =>
  new OpenAI({ apiKey: user.key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });
const ask = (model: string) =>
  sdk().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, logprobs: true });

/** A model of the hf base with checkpoints 1..n, each a PEFT adapter (two files) in the artifact store. */
async function trainedModel(steps: number, rank = 8, { withConfig = true } = {}) {
  const model = await createModel(user, { base_model: HF_ID, project: 'vllm' });
  const db = await getDb();
  for (let step = 1; step <= steps; step++) {
    const prefix = `models/${model.id}/checkpoints/${step}`;
    if (withConfig)
      await putArtifact(
        `${prefix}/adapter_config.json`,
        JSON.stringify({
          peft_type: 'LORA',
          r: rank,
          lora_alpha: 16,
          base_model_name_or_path: HF_ID,
          target_modules: ['q_proj', 'v_proj'],
        }),
      );
    await putArtifact(
      `${prefix}/adapter_model.safetensors`,
      new Uint8Array([8, 0, 0, 0, 0, 0, 0, 0, 123, 125, 32, 32, 32, 32, 32, 32]),
    );
    await insertCheckpoint(db, {
      modelId: model.id,
      step,
      metrics: {},
      artifactKey: `${prefix}/adapter_model.safetensors`,
    });
  }
  return `${user.handle}/vllm/${model.name}`;
}

const loads = () => vllm.calls.filter((c) => c.endpoint === 'POST /v1/load_lora_adapter');
const unloads = () => vllm.calls.filter((c) => c.endpoint === 'POST /v1/unload_lora_adapter');

describe('vLLM serving', () => {
  it('serves the base model under its vLLM name and relays vLLM’s float text unchanged', async () => {
    const res = await ask(HF_ID);
    expect(res.model).toBe(HF_ID);
    expect(res.choices[0].message.content).toBe('base');
    const raw = await routeFetch('http://localhost:3000/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: HF_ID, messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    const text = await raw.text();
    expect(text).toContain('"logprob":-1e-05');
    expect(text).toContain(`"model":"${HF_ID}"`);
    expect(text).not.toContain('"usage"');
  });

  it('loads a checkpoint’s adapter from the shared folder before its first request, once', async () => {
    const name = await trainedModel(1);
    const before = loads().length;
    const res = await ask(`${name}:step1`);
    expect(res.model).toBe(`${name}:step1`);
    expect(res.choices[0].message.content).toBe(`adapter ${name}:step1 r=8`);
    const load = loads().at(-1)!;
    expect(load.body.lora_name).toBe(`${name}:step1`);
    // The two files of the adapter were copied out of the artifact store into the shared folder.
    const dir = String(load.body.lora_path);
    expect(dir.startsWith(adapterDir)).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    await ask(`${name}:step1`);
    await ask(name); // latest = step 1, the same adapter
    expect(loads().length).toBe(before + 1);
    // Usage is recorded under the checkpoint's name from vLLM's counts.
    await new Promise((r) => setTimeout(r, 50));
    const usage = await call(usageRoute, 'GET', '/v1/usage', { key: user.key });
    expect(usage.body.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ model: `${name}:step1`, requests: 3, completion_tokens: 6 })]),
    );
  });

  it('copies the adapter out of S3-compatible storage when artifacts live there', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-vllm-s3-'));
    const s3rver = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: root,
      configureBuckets: [{ name: 'artifacts', configs: [] }],
    });
    const { port } = await s3rver.run();
    Object.assign(process.env, {
      TUNEBOARD_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      TUNEBOARD_S3_BUCKET: 'artifacts',
      TUNEBOARD_S3_ACCESS_KEY_ID: 'S3RVER',
      TUNEBOARD_S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    try {
      const name = await trainedModel(1, 12);
      expect(fs.readdirSync(root).length).toBeGreaterThan(0); // the artifacts went to S3, not the local store
      expect((await ask(`${name}:step1`)).choices[0].message.content).toBe(`adapter ${name}:step1 r=12`);
    } finally {
      for (const k of [
        'TUNEBOARD_S3_ENDPOINT',
        'TUNEBOARD_S3_BUCKET',
        'TUNEBOARD_S3_ACCESS_KEY_ID',
        'TUNEBOARD_S3_SECRET_ACCESS_KEY',
      ])
        delete process.env[k];
      await s3rver.close();
    }
  });

  it('step 0 is the base model itself: no adapter', async () => {
    const name = await trainedModel(1);
    const before = loads().length;
    const res = await ask(`${name}:step0`);
    expect(res.choices[0].message.content).toBe('base');
    expect(loads().length).toBe(before);
  });

  it('unloads the least recently used adapter within --max-loras', async () => {
    vllm.restart();
    vllmAdapters()
      .loadedNames()
      .forEach((n) => vllmAdapters().forget(n));
    vllm.maxLoadedSeen = 0;
    const name = await trainedModel(3);
    await ask(`${name}:step1`);
    await ask(`${name}:step2`);
    await ask(`${name}:step1`); // step 2 is now the least recently used
    const unloadsBefore = unloads().length;
    await ask(`${name}:step3`);
    expect(
      unloads()
        .slice(unloadsBefore)
        .map((c) => c.body.lora_name),
    ).toEqual([`${name}:step2`]);
    expect([...vllm.loaded.keys()].sort()).toEqual([`${name}:step1`, `${name}:step3`]);
    expect(vllm.maxLoadedSeen).toBe(2);
    // Asking for step 2 again brings it back, evicting step 1.
    expect((await ask(`${name}:step2`)).choices[0].message.content).toBe(`adapter ${name}:step2 r=8`);
    expect([...vllm.loaded.keys()].sort()).toEqual([`${name}:step2`, `${name}:step3`]);
  });

  it('loads again when vLLM lost the adapter (restarted), and counts “already loaded” as loaded', async () => {
    const name = await trainedModel(1);
    await ask(`${name}:step1`);
    vllm.restart();
    expect((await ask(`${name}:step1`)).choices[0].message.content).toBe(`adapter ${name}:step1 r=8`);
    // Another Tuneboard process loaded it behind our back: vLLM's 400 "already been loaded" is success.
    const other = await trainedModel(1);
    vllm.loaded.set(`${other}:step1`, { path: '/elsewhere', rank: 4 });
    expect((await ask(`${other}:step1`)).choices[0].message.content).toBe(`adapter ${other}:step1 r=4`);
  });

  it('maps every adapter failure to a clear 503 (or 500 for a broken checkpoint), never a 404', async () => {
    const name = await trainedModel(1);
    vllm.options.runtimeUpdating = false;
    await expect(ask(`${name}:step1`)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('VLLM_ALLOW_RUNTIME_LORA_UPDATING=True'),
    });
    vllm.options.runtimeUpdating = true;

    const big = await trainedModel(1, 64);
    await expect(ask(`${big}:step1`)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('LoRA rank 64 is greater than max_lora_rank 16'),
    });

    const broken = await trainedModel(1, 8, { withConfig: false });
    await expect(ask(`${broken}:step1`)).rejects.toMatchObject({
      status: 500,
      message: expect.stringContaining('adapter_config.json is missing'),
    });

    delete process.env.TUNEBOARD_VLLM_ADAPTER_DIR;
    const unshared = await trainedModel(1);
    await expect(ask(`${unshared}:step1`)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('TUNEBOARD_VLLM_ADAPTER_DIR'),
    });
  });

  it('answers 503 with the reason when the serving engine is down or missing, and lists why', async () => {
    // Served by the built-in engine from a directory it cannot load (no tokenizer).
    await expect(ask(DOWN_ID)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('cannot be served right now'),
    });
    // A port where nothing listens: a vLLM server that is down.
    const closed = await startFakeVllm('gone');
    await closed.close();
    process.env.TUNEBOARD_UPSTREAM_URL = closed.url;
    await expect(ask(HF_ID)).rejects.toMatchObject({ status: 503, message: expect.stringContaining('not reachable') });
    const list = openAiModelListSchema.parse(
      (await call(modelsListRoute, 'GET', '/v1/models', { key: user.key })).body,
    );
    expect(list.data.find((m) => m.id === HF_ID)).toMatchObject({
      available: false,
      unavailable_reason: 'the vLLM server is not reachable',
      served_by: 'vllm',
      trained_by: 'python-worker',
    });
    delete process.env.TUNEBOARD_UPSTREAM_URL;
    await expect(ask(HF_ID)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('TUNEBOARD_UPSTREAM_URL'),
    });
  });

  it('lists size, context length, trainer, server and availability in /v1/models and the picker', async () => {
    const list = openAiModelListSchema.parse(
      (await call(modelsListRoute, 'GET', '/v1/models', { key: user.key })).body,
    );
    expect(list.data.find((m) => m.id === HF_ID)).toMatchObject({
      parameters: 10,
      max_model_len: 4096, // vLLM's own limit wins over config.json's 40960
      trained_by: 'python-worker',
      served_by: 'vllm',
      owned_by: 'upstream',
      available: true,
      unavailable_reason: null,
    });
    // A Hugging Face model the built-in engine serves is Tuneboard's, not "upstream" (it was named by its backend).
    expect(list.data.find((m) => m.id === DOWN_ID)).toMatchObject({ served_by: 'builtin', owned_by: 'tuneboard' });
    expect(list.data.find((m) => m.id === TEST_BASE_MODEL)).toMatchObject({
      served_by: 'builtin',
      owned_by: 'tuneboard',
      trained_by: 'builtin',
      available: true,
      max_model_len: 256,
    });
    const picker = baseModelListSchema.parse(
      (await call(baseModelsRoute, 'GET', '/v1/preview/base-models', { key: user.key })).body,
    );
    expect(picker.data.find((m) => m.id === DOWN_ID)).toMatchObject({
      parameters: 10,
      context_length: 40960,
      served_by: 'builtin',
      available: false,
      unavailable_reason: 'the built-in engine cannot serve it: its model directory lacks tokenizer.json',
    });
  });
});
