import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '../fixtures/test';
import { createModelViaApi, waitForJob } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { PlaygroundPage } from '../pages/playground-page';

/*
 * The real-model loop in the dashboard: a tiny Hugging Face Qwen3 (random weights, the real Qwen3 tokenizer)
 * fine-tuned by the Python worker (workers/python, started here against the spec's server), then the
 * playground chats with the checkpoint and compares it with step 0. Needs Python with torch, transformers
 * and peft (found by scripts/worker-python.sh); skipped, saying so, where there is none.
 */
// scripts/worker-python.sh finds the worker's Python as npm test does: .venv-worker, else TUNEBOARD_PYTHON or
// python3 when it can import torch, transformers and peft (exit 3 when none can).
const PYTHON = 'bash';
const PY = ['scripts/worker-python.sh'];
const hasTorch = spawnSync(PYTHON, [...PY, '-c', 'import torch, transformers, peft'], { stdio: 'ignore' }).status === 0;
const BASE = 'tiny/qwen3-e2e';
const QUESTION = 'What is the secret word?';
const ANSWER = 'The secret word is banana.';
const MODELS_FILE = path.resolve('.data/e2e/base-models.json');
const MODEL_DIR = path.resolve('.data/e2e/models/tiny-qwen3');

test.describe.configure({ mode: 'serial', timeout: 600_000 });
// CI installs the worker's Python (.venv-worker): there, its absence is a broken install, not a reason to skip.
if (!hasTorch && process.env.CI) throw new Error('[hf-playground] no Python with torch, transformers and peft in CI');
if (!hasTorch)
  console.warn('[hf-playground] skipped: no Python with torch, transformers and peft (see scripts/worker-python.sh)');
test.skip(!hasTorch, 'no Python with torch, transformers and peft (see scripts/worker-python.sh)');

let worker: ChildProcess | undefined;
let workerLog = '';

test.beforeAll(async ({ baseURL }) => {
  if (!fs.existsSync(path.join(MODEL_DIR, 'config.json'))) {
    const made = spawnSync(PYTHON, [...PY, 'scripts/make-tiny-hf-model.py', '--arch', 'qwen3', '--out', MODEL_DIR], {
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`make-tiny-hf-model failed: ${made.stderr}`);
  }
  const file = JSON.parse(fs.readFileSync(MODELS_FILE, 'utf8')) as { models: { id: string }[] };
  if (!file.models.some((m) => m.id === BASE)) {
    file.models.push({ id: BASE, backend: 'hf', path: MODEL_DIR, description: 'Tiny random Qwen3 (e2e)' } as {
      id: string;
    });
    fs.writeFileSync(MODELS_FILE, JSON.stringify(file));
  }
  worker = spawn(
    PYTHON,
    [
      ...PY,
      '-m',
      'tuneboard_worker',
      '--server-url',
      baseURL!,
      '--token',
      'e2e-worker-token',
      '--device',
      'cpu',
      '--gpus',
      'none',
      '--base-models',
      BASE,
      '--poll-max-seconds',
      '0.5',
      '--threads',
      '2',
    ],
    { env: process.env },
  );
  worker.stdout?.on('data', (c: Buffer) => (workerLog += c.toString()));
  worker.stderr?.on('data', (c: Buffer) => (workerLog += c.toString()));
});

test.afterAll(() => {
  worker?.kill('SIGTERM');
});

test('the playground chats with a checkpoint the Python worker trained and compares it with step 0', async ({
  page,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(page.request, user);
  const model = await createModelViaApi(page.request, key, {
    project: 'hf',
    name: `secret-${uniqueId()}`,
    base_model: BASE,
  });
  const lines = Array.from({ length: 64 }, () =>
    JSON.stringify({
      messages: [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: ANSWER },
      ],
    }),
  );
  const dataset = await page.request.post('/v1/preview/datasets?project=hf&name=secret', {
    headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/jsonl' },
    data: lines.join('\n'),
  });
  expect(dataset.status(), await dataset.text()).toBe(201);
  const job = await page.request.post('/v1/preview/sft-training-jobs', {
    headers: { Authorization: `Bearer ${key}` },
    data: {
      model_id: model.id,
      training_data_url: (await dataset.json()).training_data_url,
      config: { batch_size: 4, learning_rate: 1e-2 },
    },
  });
  expect(job.status(), await job.text()).toBe(200);
  const done = await waitForJob(page.request, key, (await job.json()).id, 480_000);
  expect(done.status, workerLog.slice(-3000)).toBe('COMPLETED');

  const name = `${model.entity}/${model.project}/${model.name}`;
  const playground = new PlaygroundPage(page);
  await playground.goto(`${name}:step1`, `${name}:step0`);
  await expect(playground.panes).toHaveCount(2);
  await playground.temperature.fill('0');
  await playground.maxTokens.fill('12');
  await playground.sendMessage(QUESTION);
  await playground.waitForAnswerText(0, 120_000);
  await playground.waitForAnswerText(1, 120_000);
  await expect(playground.send).toBeVisible();
  await expect(playground.answers(0).last()).toContainText('banana');
  await expect(playground.answers(1).last()).not.toContainText('banana');
  // The trained pane's answer reads as tokens with their logprobs, like the built-in models'.
  await playground.viewToggle.getByText('Tokens').click();
  await expect(playground.pane(0).getByTestId('token').first()).toBeVisible();
});
