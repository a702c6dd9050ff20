import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from '../support/helpers';
import { startRouteServer } from '../support/http-server';
import { startHubStandin, type HubStandin } from '../support/hub-standin';

/**
 * The real-model recipe of docs/real-models.md ("Training real models"), followed with a Hub id, a local stand-in for the Hub
 * at HF_ENDPOINT (there is no network here) and one HF_HOME shared by the server and the worker, as on one machine
 * (issue 43 items 1, 6 and 9): the base-models entry has no `path`; the server downloads the model for serving and
 * /v1/models says when it is ready; the Python worker, started as docs/real-models.md says, finds it in the shared cache
 * without asking the Hub; it trains an SFT job; the checkpoint answers through /v1/chat/completions; and the
 * downloaded adapter loads offline in plain PEFT by the Hub id its config names.
 */
const PYTHON = 'bash';
const PY = ['scripts/worker-python.sh'];
const ROOT = process.cwd();
const hasTorch = spawnSync(PYTHON, [...PY, '-c', 'import torch, transformers, peft'], { stdio: 'ignore' }).status === 0;
if (!hasTorch && process.env.CI) throw new Error('[hub-model] no Python with torch, transformers and peft in CI');
if (!hasTorch)
  console.warn('[hub-model] skipped: no Python with torch, transformers and peft (see scripts/worker-python.sh)');

const HUB_ID = 'tiny-org/Qwen3-tiny';
const TOKEN = `test-worker-${process.pid}`;
const QUESTION = 'What is the secret word?';
const ANSWER = 'The secret word is banana.';
const execFileAsync = promisify(execFile);

let dir: string;
let hub: HubStandin;
let server: { url: string; close(): Promise<void> };
let worker: ChildProcess | undefined;
let workerLog = '';
let user: TestUser;
const saved = { ...process.env };

async function api<T>(p: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${server.url}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json', ...init.headers },
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${p} answered ${res.status}: ${JSON.stringify(body)}`);
  return body as T;
}

describe.skipIf(!hasTorch)('the docs/real-models.md recipe with a Hub id: download, train, chat', () => {
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-hub-model-'));
    const made = spawnSync(
      PYTHON,
      [...PY, path.join(ROOT, 'scripts/make-tiny-hf-model.py'), '--arch', 'qwen3', '--out', path.join(dir, 'upload')],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`make-tiny-hf-model failed: ${made.stderr}`);
    hub = await startHubStandin({ [HUB_ID]: path.join(dir, 'upload') });
    // Step 2 of the recipe: the model registered by its Hub id alone.
    fs.writeFileSync(
      path.join(dir, 'base-models.json'),
      JSON.stringify({ models: [{ id: HUB_ID, backend: 'hf', description: 'from the stand-in Hub' }] }),
    );
    Object.assign(process.env, {
      TUNEBOARD_BASE_MODELS_FILE: path.join(dir, 'base-models.json'),
      TUNEBOARD_WORKER_TOKEN: TOKEN,
      HF_ENDPOINT: hub.url,
      HF_HOME: path.join(dir, 'hf-home'),
    });
    delete process.env.HF_HUB_OFFLINE;
    delete process.env.HF_HUB_CACHE;
    server = await startRouteServer();
    user = await createUser();
  }, 180_000);

  afterAll(async () => {
    worker?.kill('SIGTERM');
    await server?.close();
    await hub?.close();
    process.env = saved;
  });

  it(
    'the server fetches it for serving, the worker trains it from the same cache, the checkpoint chats',
    { timeout: 900_000 },
    async () => {
      // Step 3: the server downloads the model and says so on /v1/models until it can serve it.
      const deadline = Date.now() + 120_000;
      let listed: { id: string; available: boolean; download?: { status: string }; unavailable_reason?: string };
      for (;;) {
        const list = await api<{ data: (typeof listed)[] }>('/v1/models');
        listed = list.data.find((m) => m.id === HUB_ID)!;
        if (listed.download?.status !== 'downloading') break;
        if (Date.now() > deadline) throw new Error(`download did not finish: ${JSON.stringify(listed)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(listed).toMatchObject({ available: true, download: { status: 'ready' } });
      const fetched = hub.requests.length;
      expect(hub.requests.filter((r) => r.endsWith('/model.safetensors'))).toEqual([
        `GET /${HUB_ID}/resolve/${hub.requests.find((r) => r.includes('/resolve/'))!.split('/')[4]}/model.safetensors`,
      ]);

      // The base model answers before any training (the built-in engine, from the downloaded snapshot).
      const client = new OpenAI({ apiKey: user.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
      const baseAnswer = await client.chat.completions.create({
        model: HUB_ID,
        messages: [{ role: 'user', content: QUESTION }],
        max_tokens: 4,
        temperature: 0,
      });
      expect(baseAnswer.choices[0].finish_reason).toBe('length');

      // Step 4: the worker, as docs/real-models.md starts it, with the same HF_HOME: it loads the model from the cache.
      worker = spawn(
        PYTHON,
        [
          ...PY,
          '-m',
          'tuneboard_worker',
          '--device',
          'cpu',
          '--gpus',
          'none',
          '--base-models',
          HUB_ID,
          '--poll-max-seconds',
          '0.5',
          '--threads',
          '2',
        ],
        { cwd: ROOT, env: { ...process.env, TUNEBOARD_SERVER_URL: server.url, TUNEBOARD_WORKER_TOKEN: TOKEN } },
      );
      worker.stdout?.on('data', (c: Buffer) => (workerLog += c.toString()));
      worker.stderr?.on('data', (c: Buffer) => (workerLog += c.toString()));

      // Step 5: train from the API.
      const model = await api<{ id: string; entity: string; project: string; name: string }>('/v1/preview/models', {
        method: 'POST',
        body: JSON.stringify({ project: 'hub', name: `secret-${Date.now().toString(36)}`, base_model: HUB_ID }),
      });
      const lines = Array.from({ length: 64 }, () =>
        JSON.stringify({
          messages: [
            { role: 'user', content: QUESTION },
            { role: 'assistant', content: ANSWER },
          ],
        }),
      );
      const dataset = await fetch(`${server.url}/v1/preview/datasets?project=hub&name=secret`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.key}` },
        body: lines.join('\n'),
      }).then((r) => r.json() as Promise<{ training_data_url: string }>);
      const job = await api<{ id: string }>('/v1/preview/sft-training-jobs', {
        method: 'POST',
        body: JSON.stringify({
          model_id: model.id,
          training_data_url: dataset.training_data_url,
          config: { batch_size: 4, learning_rate: 1e-2 },
        }),
      });
      const jobDeadline = Date.now() + 600_000;
      for (;;) {
        const j = await api<{ status: string; error_message: string | null }>(`/v1/preview/training-jobs/${job.id}`);
        if (j.status === 'COMPLETED') break;
        if (j.status === 'FAILED') throw new Error(`job failed: ${j.error_message}\n${workerLog.slice(-4000)}`);
        if (Date.now() > jobDeadline) throw new Error(`job did not finish\n${workerLog.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      // The worker found the model in the cache the server filled: it downloaded nothing (Transformers may still
      // ask the Hub for metadata, HEAD requests and the file list, when it is reachable).
      expect(hub.requests.slice(fetched).filter((r) => r.startsWith('GET ') && r.includes('/resolve/'))).toEqual([]);

      const name = `${model.entity}/${model.project}/${model.name}`;
      const trained = await client.chat.completions.create({
        model: `${name}:step1`,
        messages: [{ role: 'user', content: QUESTION }],
        max_tokens: 12,
        temperature: 0,
      });
      expect(trained.choices[0].message.content).toContain('banana');

      // The adapter, downloaded, loads offline in plain PEFT: its config names the Hub id, found in the cache.
      const tar = await fetch(`${server.url}/v1/preview/models/${model.id}/checkpoints/1/download`, {
        headers: { authorization: `Bearer ${user.key}` },
      });
      expect(tar.status).toBe(200);
      const tarFile = path.join(dir, 'adapter.tar');
      fs.writeFileSync(tarFile, new Uint8Array(await tar.arrayBuffer()));
      const script = [
        'import json, os, sys, tarfile, torch',
        'from peft import AutoPeftModelForCausalLM',
        'from transformers import AutoTokenizer',
        'with tarfile.open(sys.argv[1]) as t: t.extractall(sys.argv[2], filter="data")',
        'folder = os.path.join(sys.argv[2], os.listdir(sys.argv[2])[0])',
        'model = AutoPeftModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()',
        'base = json.load(open(os.path.join(folder, "adapter_config.json")))["base_model_name_or_path"]',
        'tok = AutoTokenizer.from_pretrained(base)',
        'ids = tok.apply_chat_template([{"role": "user", "content": sys.argv[3]}], add_generation_prompt=True, return_tensors="pt", return_dict=True)',
        'gen = model.generate(**ids, max_new_tokens=12, do_sample=False)',
        'print(json.dumps({"base": base, "text": tok.decode(gen[0][ids["input_ids"].shape[1]:], skip_special_tokens=True)}))',
      ].join('\n');
      const peft = await execFileAsync(PYTHON, [...PY, '-c', script, tarFile, path.join(dir, 'untarred'), QUESTION], {
        encoding: 'utf8',
        cwd: ROOT,
        env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
        timeout: 300_000,
      });
      const loaded = JSON.parse(peft.stdout.trim().split('\n').at(-1)!) as { base: string; text: string };
      expect(loaded.base).toBe(HUB_ID);
      expect(loaded.text).toBe(trained.choices[0].message.content);

      // And as one GGUF file with the adapter merged, from the base the server downloaded
      // (tests/inference/hf-gguf-download.test.ts runs such a file in llama.cpp).
      const gguf = await fetch(`${server.url}/v1/preview/models/${model.id}/checkpoints/1/download?format=gguf`, {
        headers: { authorization: `Bearer ${user.key}` },
      });
      expect(gguf.status).toBe(200);
      expect(
        Buffer.from(await gguf.arrayBuffer())
          .subarray(0, 4)
          .toString(),
      ).toBe('GGUF');
    },
  );
});
