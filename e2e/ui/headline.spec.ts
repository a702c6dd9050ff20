import path from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from '../fixtures/test';
import { sftLines } from '../fixtures/models';
import { createModelViaApi, createRlJob, logGroups, waitForJob } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';

/*
 * Issue 41, "an honest headline": the model page's one-line verdict, its best checkpoint and its warnings say what
 * happened. Each test seeds its own model through the API, as a client would, and the pages it checks are written to
 * test-results/headline/ at 390 and 1280 px, light and dark, for a person to look at.
 */

const OUT = path.join('test-results', 'headline');
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

async function shoot(page: Page, name: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.waitForLoadState('networkidle');
      await page.screenshot({
        path: path.join(OUT, `${name}-${width}-${colorScheme}.png`),
        fullPage: true,
        animations: 'disabled',
      });
      // A phone's first screen on its own: the whole page at 390 px is too long to read at a glance.
      if (width === 390)
        await page.screenshot({
          path: path.join(OUT, `${name}-${width}-${colorScheme}-top.png`),
          animations: 'disabled',
        });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function sftJob(request: APIRequestContext, key: string, modelId: string, lines: string, config: object) {
  const upload = await request.post(`/v1/preview/datasets?project=headline&name=d-${uniqueId()}`, {
    headers: auth(key),
    data: lines,
  });
  expect(upload.status(), await upload.text()).toBe(201);
  const { training_data_url } = (await upload.json()) as { training_data_url: string };
  const res = await request.post('/v1/preview/sft-training-jobs', {
    headers: auth(key),
    data: { model_id: modelId, training_data_url, config },
  });
  expect(res.status(), await res.text()).toBe(200);
  const job = await waitForJob(request, key, ((await res.json()) as { id: string }).id, 60_000);
  expect(job.status, job.error_message ?? '').toBe('COMPLETED');
  return job;
}

/** An ART trajectory whose one Choice stopped at the token limit or not; its length metric is not called *_tokens. */
function group(reward: number, capped: number, of = 4) {
  return {
    trajectories: Array.from({ length: of }, (_, i) => ({
      reward: i < capped ? reward : reward / 3,
      metrics: { answer_len: i < capped ? 64 : 12 },
      messages_and_choices: [
        { role: 'user', content: 'Explain gravity.' },
        {
          finish_reason: i < capped ? 'length' : 'stop',
          index: 0,
          logprobs: null,
          message: { role: 'assistant', content: i < capped ? 'because '.repeat(64) : 'Mass attracts mass.' },
        },
      ],
    })),
  };
}

test('after one SFT job the verdict reads its gradient steps, and its curve is on top', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'headline', name: `sft-${uniqueId()}` });
  // 20 examples × 5 epochs ÷ batch 2 = 50 gradient steps, one checkpoint: one mean per job in the history.
  const job = await sftJob(request, key, model.id, sftLines(20), { batch_size: 2, learning_rate: 1e-3, epochs: 5 });

  const m = new ModelPage(page);
  await m.goto(model.id);
  const verdict = page.getByTestId('run-verdict');
  await expect(verdict).toHaveAttribute('data-kind', 'improving');
  await expect(verdict).toHaveText('Improving: training loss');
  await expect(page.getByTestId('summary-verdict')).toContainText(
    `first vs last third of 50 gradient steps of job ${job.id.slice(0, 8)}`,
  );
  // The per-step curve comes before the per-checkpoint charts on an SFT-only model.
  const curve = await page.getByTestId('training-curve').boundingBox();
  const perCheckpoint = await page.getByTestId('metric-charts').boundingBox();
  expect(curve && perCheckpoint && curve.y < perCheckpoint.y).toBe(true);
  // An SFT-only model's hints speak of held-out examples, not of logging a val split (an RL client's words).
  await expect(page.getByTestId('summary-best-hint')).toContainText('hold examples out');
  // What a checkpoint's train/* values are is said.
  await expect(page.getByTestId('train-mean-note')).toContainText('means over its gradient steps');
  // axe's landmark-unique (a best practice, outside the WCAG tags the other specs check).
  const landmarks = await new AxeBuilder({ page }).withRules(['landmark-unique']).analyze();
  expect(landmarks.violations.map((v) => v.nodes.map((n) => n.target.join(' ')))).toEqual([]);
  await shoot(page, 'model-sft');

  // The job page: configuration keys whole, no internal empty objects, event times with seconds.
  await page.goto(`/jobs/${job.id}`);
  const config = page.getByTestId('job-config');
  await expect(config).toContainText('batch_size');
  await expect(config).not.toContainText('{}');
  await expect(page.getByTestId('job-event-row').first().locator('time')).toHaveText(/\d\d:\d\d:\d\d UTC$/);
  await shoot(page, 'job-sft');
});

test('completions filling max_tokens are flagged whatever the metric is named, ahead of "No update"', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'headline', name: `pinned-${uniqueId()}` });
  // Reward 0.32 → 1.0 while ever more completions stop at the limit; an RL job without groups moves each step on
  // (and makes no update).
  const capped = [0, 0, 1, 3, 4, 4];
  for (let i = 0; i < capped.length; i++) {
    await logGroups(request, key, model.id, 'train', [group(0.32 + (0.68 * i) / (capped.length - 1), capped[i])]);
    if (i < capped.length - 1) {
      const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
      expect(job.status).toBe('COMPLETED');
    }
  }

  const m = new ModelPage(page);
  await m.goto(model.id);
  const verdict = page.getByTestId('run-verdict');
  await expect(verdict).toHaveAttribute('data-kind', 'hacked');
  await expect(verdict).toHaveText('Possible reward hacking: 100 % of train completions stop at the token limit');
  await expect(page.getByTestId('hacking-length-capped')).toContainText('finish_reason “length”');
  // The newest job made no update, and says so in its own tile; the verdict is the warning.
  await expect(page.getByTestId('summary-no-update')).toBeVisible();
  await shoot(page, 'model-length-pinned');
});

test('checkpoints that all scored the same are called tied, not "Best: the latest"', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'headline', name: `tied-${uniqueId()}` });
  const perfect = { trajectories: [0, 1].map(() => ({ reward: 1, messages_and_choices: [] })) };
  for (let i = 0; i < 3; i++) {
    const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
    expect(job.status).toBe('COMPLETED');
    await logGroups(request, key, model.id, 'val', [perfect]);
  }

  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(page.getByTestId('summary-best-tied')).toHaveText('Tied: all 3 checkpoints');
  await expect(page.getByTestId('summary-best')).toContainText('none is better');
  await expect(page.getByTestId('tied-badge')).toHaveCount(3);
  await expect(m.bestBadge).toHaveCount(0);
  await shoot(page, 'model-tied');
});
