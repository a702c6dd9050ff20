import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from '../helpers';
import { startRouteServer } from '../support/http-server';

/**
 * The whole real-model loop on a CPU-only machine: a tiny Hugging Face Qwen3 (random weights, the real Qwen3
 * tokenizer) → an SFT job trained by the Python worker (workers/python, a separate process speaking the HTTP
 * worker protocol) → chat with `entity/project/name:step1` through /v1/chat/completions with logprobs, served
 * by the built-in engine with the checkpoint's LoRA adapter, gives the trained answer where step 0 does not.
 *
 * Needs Python with torch, transformers and peft (found by scripts/worker-python.sh, as npm test finds it);
 * skipped, saying so, where there is none.
 */
// scripts/worker-python.sh finds the worker's Python as npm test does: .venv-worker, else TUNEBOARD_PYTHON or
// python3 when it can import torch, transformers and peft (exit 3 when none can).
const PYTHON = 'bash';
const PY = ['scripts/worker-python.sh'];
const ROOT = process.cwd();
const hasTorch = spawnSync(PYTHON, [...PY, '-c', 'import torch, transformers, peft'], { stdio: 'ignore' }).status === 0;
if (!hasTorch)
  console.warn('[hf-loop] skipped: no Python with torch, transformers and peft (see scripts/worker-python.sh)');

const BASE = 'tiny/qwen3';
const TOKEN = `test-worker-${process.pid}`;
const QUESTION = 'What is the secret word?';
const ANSWER = 'The secret word is banana.';

let dir: string;
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

async function waitForJob(jobId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const job = await api<{ status: string }>(`/v1/preview/training-jobs/${jobId}`);
    if (job.status === 'COMPLETED') return;
    if (job.status === 'FAILED') {
      const events = await api<{ data: { type: string; data: unknown }[] }>(
        `/v1/preview/training-jobs/${jobId}/events?limit=100`,
      );
      throw new Error(`training failed: ${JSON.stringify(events.data.at(-1))}\n${workerLog.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`job ${jobId} did not finish in time\n${workerLog.slice(-4000)}`);
}

describe.skipIf(!hasTorch)('the real-model loop: HF base → Python SFT → chat with the checkpoint → RL', () => {
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-hf-loop-'));
    const made = spawnSync(
      PYTHON,
      [
        ...PY,
        path.join(ROOT, 'scripts/make-tiny-hf-model.py'),
        '--arch',
        'qwen3',
        '--out',
        path.join(dir, 'tiny-qwen3'),
      ],
      {
        encoding: 'utf8',
      },
    );
    if (made.status !== 0) throw new Error(`make-tiny-hf-model failed: ${made.stderr}`);
    fs.writeFileSync(
      path.join(dir, 'base-models.json'),
      JSON.stringify({
        models: [
          { id: 'tuneboard/tiny-random', backend: 'builtin' },
          { id: BASE, backend: 'hf', path: 'tiny-qwen3' },
        ],
      }),
    );
    Object.assign(process.env, {
      TUNEBOARD_BASE_MODELS_FILE: path.join(dir, 'base-models.json'),
      TUNEBOARD_BASE_MODELS_DIR: dir,
      TUNEBOARD_WORKER_TOKEN: TOKEN,
    });
    server = await startRouteServer();
    user = await createUser();
    worker = spawn(
      PYTHON,
      [
        ...PY,
        '-m',
        'tuneboard_worker',
        '--server-url',
        server.url,
        '--token',
        TOKEN,
        '--device',
        'cpu',
        '--gpus',
        'none',
        '--models-dir',
        dir,
        '--base-models',
        BASE,
        '--poll-max-seconds',
        '0.5',
        '--threads',
        '2',
      ],
      { cwd: ROOT, env: process.env },
    );
    worker.stdout?.on('data', (c: Buffer) => (workerLog += c.toString()));
    worker.stderr?.on('data', (c: Buffer) => (workerLog += c.toString()));
  }, 120_000);

  afterAll(async () => {
    worker?.kill('SIGTERM');
    await server?.close();
    process.env = saved;
  });

  it(
    'SFT by the Python worker, then the checkpoint answers what it was taught and step 0 does not',
    { timeout: 900_000 },
    async () => {
      const model = await api<{ id: string; entity: string; project: string; name: string }>('/v1/preview/models', {
        method: 'POST',
        body: JSON.stringify({
          entity: null,
          project: 'hf-loop',
          name: `secret-${Date.now().toString(36)}`,
          base_model: BASE,
        }),
      });
      const lines = Array.from({ length: 64 }, () =>
        JSON.stringify({
          messages: [
            { role: 'user', content: QUESTION },
            { role: 'assistant', content: ANSWER },
          ],
        }),
      );
      const dataset = await fetch(`${server.url}/v1/preview/datasets?project=hf-loop&name=secret`, {
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
      await waitForJob(job.id, 600_000);

      const name = `${model.entity}/${model.project}/${model.name}`;
      const client = new OpenAI({ apiKey: user.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
      const ask = (m: string) =>
        client.chat.completions.create({
          model: m,
          messages: [{ role: 'user', content: QUESTION }],
          max_tokens: 12,
          temperature: 0,
          logprobs: true,
          top_logprobs: 2,
        });
      const trained = await ask(`${name}:step1`);
      const base = await ask(`${name}:step0`);
      expect(trained.choices[0].message.content).toContain('banana');
      expect(base.choices[0].message.content).not.toContain('banana');
      // Token logprobs with token ids, as RL clients read them.
      const first = trained.choices[0].logprobs!.content![0];
      expect(first.token).toMatch(/^token_id:\d+$/);
      expect(first.logprob).toBeLessThanOrEqual(0);
      expect(first.top_logprobs).toHaveLength(2);

      // The ART-style RL part (three steps raising the mean reward) is not here yet: run against this stack, the
      // served policy's expected reward on the worker's one-token task did not change at all over three RL jobs
      // (0.529 at every step), which needs investigating before it can be asserted.
    },
  );
});
