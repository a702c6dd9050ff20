import path from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, waitForJob } from '../fixtures/seed';
import { jobCreatedSchema } from '@/lib/schemas/training-jobs';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';

/*
 * Run comparison (issue 41 item 2): three runs that differ in learning rate (and one in LoRA rank) on shared
 * charts, the run table marking what differed, and the address sharing the selection.
 */

const OUT = path.resolve('test-results/screenshots');
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Six one-line examples: batch size 1 makes six gradient steps, a line on every chart. */
const DATASET = Array.from({ length: 6 }, (_, i) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `Say ${i}.` },
      { role: 'assistant', content: `${i} ${i} ${i}` },
    ],
  }),
).join('\n');

async function sftRun(request: APIRequestContext, key: string, project: string, config: Record<string, unknown>) {
  const model = await createModelViaApi(request, key, { project, name: `lr-${uniqueId()}` });
  const upload = await request.post(`/v1/preview/datasets?project=${project}&name=d-${uniqueId()}`, {
    headers: auth(key),
    data: DATASET,
  });
  expect(upload.status(), await upload.text()).toBe(201);
  const { training_data_url } = (await upload.json()) as { training_data_url: string };
  const res = await request.post('/v1/preview/sft-training-jobs', {
    headers: auth(key),
    data: { model_id: model.id, training_data_url, config: { batch_size: 1, ...config } },
  });
  expect(res.status(), await res.text()).toBe(200);
  const job = await waitForJob(request, key, jobCreatedSchema.parse(await res.json()).id, 90_000);
  expect(job.status, job.error_message ?? '').toBe('COMPLETED');
  return model;
}

async function shoot(page: Page, name: string) {
  for (const width of [390, 1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme });
      await expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark)/);
      await page.screenshot({
        path: path.join(OUT, `${theme}-${name}-${width}.png`),
        fullPage: true,
        animations: 'disabled',
      });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('three runs compared: overlaid curves, the settings that differ, and a shared address that keeps them', async ({
  page,
  request,
  browser,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const project = `cmp-${uniqueId()}`;
  // The first and third differ only in learning rate; the second also in LoRA rank.
  const a = await sftRun(request, key, project, { learning_rate: 1e-4 });
  const b = await sftRun(request, key, project, { learning_rate: 5e-4, lora_rank: 4 });
  const c = await sftRun(request, key, project, { learning_rate: 2e-5 });

  // Picked on the Models page, in the order ticked.
  await page.goto(`/models?project=${project}`);
  const rowOf = (name: string) => page.getByTestId('model-row').filter({ hasText: name });
  await expect(page.getByTestId('compare-hint')).toHaveText('Tick 2–8 models to compare');
  for (const m of [a, b, c]) await rowOf(m.name).getByTestId('model-compare-checkbox').check();
  // Ticking does not open the model.
  await expect(page).toHaveURL(/\/models\?/);
  await expect(page.getByTestId('compare-project')).toBeVisible();
  await page.getByTestId('compare-selected').click();
  await expect(page).toHaveURL(new RegExp(`/compare\\?models=${a.id}(,|%2C)${b.id}(,|%2C)${c.id}`));

  // The run table: three runs, completed, and the settings that differ marked (only those by default).
  const runs = page.getByTestId('compare-run');
  await expect(runs).toHaveCount(3);
  await expect(runs.nth(0)).toContainText(a.name);
  await expect(runs.nth(2)).toContainText(c.name);
  const diffs = page.getByTestId('config-diff');
  await expect(diffs.first()).toBeVisible();
  const diffKeys = await diffs.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
  expect(diffKeys).toContain('learning_rate');
  expect(diffKeys).toContain('lora_rank');
  expect(diffKeys).not.toContain('batch_size');
  await expect(page.getByTestId('config-same')).toHaveCount(0);
  await expect(diffs.filter({ hasText: 'learning_rate' })).toContainText('0.0005');
  // All settings: the equal ones too, unmarked.
  await page.getByTestId('compare-all-settings').check();
  await expect(page.getByTestId('config-same').filter({ hasText: 'batch_size' })).toBeVisible();
  await expect(page.getByTestId('compare-metric').filter({ hasText: /^loss/ })).toContainText('★');

  // The overlay: a loss chart with one line per run.
  const loss = page.locator('[data-testid="metric-chart-card"][data-metric="loss"]');
  await expect(loss.getByRole('list', { name: 'Series' }).getByRole('listitem')).toHaveText([a.name, b.name, c.name]);
  await expect(loss.locator('.recharts-line-curve')).toHaveCount(3);

  // Another axis: tokens trained (SFT steps count their trainable tokens), kept in the address.
  await page.getByTestId('compare-axis').getByText('Tokens trained').click();
  await expect(page).toHaveURL(/axis=tokens/);
  await expect(loss.locator('.recharts-line-curve')).toHaveCount(3);
  await expect(page.getByTestId('compare-axis-gaps')).toHaveCount(0);
  await page.getByTestId('compare-axis').getByText('Time since start').click();
  await expect(page).toHaveURL(/axis=wall_clock/);
  await expect(loss.locator('.recharts-line-curve').first()).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'compare page');

  // The address, opened elsewhere (a colleague's browser, same account) and reloaded, shows the same comparison.
  const shared = page.url();
  const other = await browser.newContext({ storageState: await page.context().storageState() });
  const second = await other.newPage();
  await second.goto(shared);
  await expect(second.getByTestId('compare-run')).toHaveCount(3);
  await second.reload();
  await expect(second.getByTestId('compare-run')).toHaveText([a, b, c].map((m) => new RegExp(m.name)));
  await expect(second.getByTestId('compare-axis').getByRole('radio', { name: 'Time since start' })).toBeChecked();
  await other.close();

  // A whole project, from the Models page's filter.
  await page.goto(`/models?project=${project}`);
  await page.getByTestId('compare-project').click();
  await expect(page).toHaveURL(new RegExp(`/compare\\?project=${project}`));
  await expect(page.getByTestId('compare-run')).toHaveCount(3);
  await page.getByTestId('compare-axis').getByText('Gradient step').click();
  await expect(loss.locator('.recharts-line-curve')).toHaveCount(3);
  await shoot(page, 'compare');
});

test('a bad selection in the address says what is wrong', async ({ page }) => {
  await signUpViaApi(page.request, newUser());
  await page.goto(`/compare?models=${crypto.randomUUID()}`);
  await expect(page.getByRole('alert').filter({ hasText: 'Could not compare' })).toContainText(
    /model_ids: compare 2 to 8 models \(got 1\)/i,
  );
  await page.goto('/compare');
  await expect(page.getByText('Pick runs to compare')).toBeVisible();
});
