import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from '../fixtures/test';
import { createModelViaApi } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';

/*
 * Speed and phases (issue 43 item 3): a claimed job says it is loading the base model (not "0 steps, no events yet"),
 * then how long that took, and its steps' speed, on the job page and the Jobs page. The spec plays the worker itself
 * over the worker routes, on a Hugging Face base model no running worker trains, so each phase lasts as long as the
 * spec needs to look at it. Screenshots of each phase go to test-results/job-speed/ for a person to look at.
 */
const BASE = 'e2e/speed-hf';
const MODELS_FILE = path.resolve('.data/e2e/base-models.json');
const WORKER = { Authorization: 'Bearer e2e-worker-token' };
const SHOTS = path.resolve('test-results/job-speed');

test.beforeAll(() => {
  const file = JSON.parse(fs.readFileSync(MODELS_FILE, 'utf8')) as { models: { id: string }[] };
  if (!file.models.some((m) => m.id === BASE)) {
    // Listed only: no worker here has it, and the spec's own "worker" never loads anything.
    file.models.push({ id: BASE, backend: 'hf', path: '/nonexistent/e2e-speed', description: 'e2e speed' } as {
      id: string;
    });
    fs.writeFileSync(MODELS_FILE, JSON.stringify(file));
  }
});

test('a claimed job shows the loading phase, then its load time and step speed, on the job and Jobs pages', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const auth = { Authorization: `Bearer ${key}` };
  // The server re-reads the base-models file when it changes: retried until it lists the new base.
  let model: Awaited<ReturnType<typeof createModelViaApi>> | undefined;
  await expect
    .poll(
      async () => {
        const res = await request.post('/v1/preview/models', {
          headers: auth,
          data: { project: 'speed', name: `speed-${uniqueId()}`, base_model: BASE },
        });
        if (res.status() === 200) model = (await res.json()) as typeof model;
        return res.status();
      },
      { timeout: 15_000 },
    )
    .toBe(200);
  const created = await request.post('/v1/preview/training-jobs', {
    headers: auth,
    data: { model_id: model!.id, trajectory_groups: [] },
  });
  expect(created.status(), await created.text()).toBe(200);
  const jobId = ((await created.json()) as { id: string }).id;

  const workerId = `e2e-speed-${uniqueId()}`;
  const claim = await request.post('/v1/workers/claim', {
    headers: WORKER,
    data: {
      worker_id: workerId,
      kinds: ['rl'],
      model_ids: [model!.id],
      capabilities: { backends: ['hf'], base_models: [BASE] },
      wait_seconds: 5,
    },
  });
  expect(claim.status(), await claim.text()).toBe(200);
  expect(((await claim.json()) as { job: { id: string } | null }).job?.id).toBe(jobId);

  // Claimed, before training_started: the worker is loading the base model.
  await page.goto(`/jobs/${jobId}`);
  await expect(page.getByTestId('job-phase')).toHaveText(/^Loading base model…/);
  // No "0 steps" progress bar while there is no total yet.
  await expect(page.getByRole('progressbar', { name: 'Training progress' })).toHaveCount(0);
  await expect(page.getByText('is loading the base model')).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, '1-job-loading.png'), fullPage: true });
  await page.goto('/jobs');
  // The job is in both tables (running and queued; all jobs): the first is the running one's.
  const row = page.getByTestId('entity-job-row').filter({ hasText: model!.name }).first();
  await expect(row.getByTestId('entity-job-loading')).toHaveText('Loading base model…');
  await page.screenshot({ path: path.join(SHOTS, '2-jobs-loading.png'), fullPage: true });

  const events = (list: { type: string; data: Record<string, number> }[], seq: number) =>
    request.post(`/v1/workers/jobs/${jobId}/events`, {
      headers: WORKER,
      data: { worker_id: workerId, events: list, seq },
    });
  const step = (seconds: number, tokens: number) => ({
    type: 'gradient_step',
    data: { loss: 1, num_trainable_tokens: tokens, step_seconds: seconds, tokens_per_second: tokens / seconds },
  });
  expect(
    (
      await events(
        [
          {
            type: 'training_started',
            data: { num_sequences: 4, load_seconds: 3.2, base_model_load_seconds: 3.0, base_model_cached: 0 },
          },
          step(0.5, 500),
          step(0.4, 500),
          step(0.6, 450),
        ],
        0,
      )
    ).status(),
  ).toBe(200);

  // The job page follows live: how long the start took, and the steps' median time and tokens/s.
  await page.goto(`/jobs/${jobId}`);
  await expect(page.getByTestId('job-phase')).toHaveText('Loaded in 3.2 s');
  await expect(page.getByTestId('job-speed')).toHaveText('Median step 500 ms · 1,000 tokens/s');
  // Each step's speed is in the events list too.
  await expect(page.getByTestId('job-event-row').first()).toContainText('step_seconds=0.6');
  await expect(page.getByTestId('job-event-row').first()).toContainText('tokens_per_second=750');
  await page.screenshot({ path: path.join(SHOTS, '3-job-speed.png'), fullPage: true });

  // The Jobs page: the latest step's speed under the duration.
  await page.goto('/jobs');
  await expect(row.getByTestId('entity-job-speed')).toHaveText('750 tokens/s 600 ms/step');
  await page.screenshot({ path: path.join(SHOTS, '4-jobs-speed.png'), fullPage: true });

  const end = await request.post(`/v1/workers/jobs/${jobId}/fail`, {
    headers: WORKER,
    data: { worker_id: workerId, error_message: 'e2e: done looking' },
  });
  expect(end.status()).toBe(200);

  // The next job on a warm worker: the base model was already in memory, and the page says so.
  const second = await request.post('/v1/preview/training-jobs', {
    headers: auth,
    data: { model_id: model!.id, trajectory_groups: [] },
  });
  const secondId = ((await second.json()) as { id: string }).id;
  const again = await request.post('/v1/workers/claim', {
    headers: WORKER,
    data: { worker_id: workerId, kinds: ['rl'], model_ids: [model!.id], capabilities: { backends: ['hf'] } },
  });
  expect(((await again.json()) as { job: { id: string } | null }).job?.id).toBe(secondId);
  const warm = await request.post(`/v1/workers/jobs/${secondId}/events`, {
    headers: WORKER,
    data: {
      worker_id: workerId,
      events: [{ type: 'training_started', data: { num_sequences: 1, load_seconds: 0.04, base_model_cached: 1 } }],
      seq: 0,
    },
  });
  expect(warm.status()).toBe(200);
  await page.goto(`/jobs/${secondId}`);
  await expect(page.getByTestId('job-phase')).toHaveText('Loaded in 40 ms (base model already in memory)');
  await page.screenshot({ path: path.join(SHOTS, '5-job-warm.png'), fullPage: true });
  await request.post(`/v1/workers/jobs/${secondId}/fail`, {
    headers: WORKER,
    data: { worker_id: workerId, error_message: 'e2e: done looking' },
  });
});
