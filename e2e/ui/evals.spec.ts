import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { sftLines } from '../fixtures/models';
import { createModelViaApi, createRlJob, waitForJob } from '../fixtures/seed';
import { SftLaunchPage } from '../pages/sft-launch-page';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';

/*
 * The Evals view (issue 41 item 1): upload a set, score two checkpoints of one model on it, read the summary, find
 * the examples that regressed between them, and open one in the playground with both checkpoints side by side.
 * Which examples regressed is made certain by client-posted scores (POST /v1/preview/eval-runs/{id}/scores): the
 * tiny test model's answers are noise, the same at both steps.
 */

const OUT = path.resolve('test-results/evals');
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

const SET = [
  {
    messages: [
      { role: 'system', content: 'Answer with a number only.' },
      { role: 'user', content: 'What is 2+2?' },
    ],
    reference: '4',
    metadata: { topic: 'math' },
  },
  { messages: [{ role: 'user', content: 'Capital of France?' }], reference: 'Paris' },
  // An SFT line as it is: the last assistant message is the reference.
  {
    messages: [
      { role: 'user', content: 'Say hello.' },
      { role: 'assistant', content: 'hello' },
    ],
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

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

test('an eval run from the dashboard: upload a set, score two checkpoints, filter the regressions, open one in the playground', async ({
  page,
  request,
  browser,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const project = `ev-${uniqueId()}`;
  const model = await createModelViaApi(request, key, { project, name: `m-${uniqueId()}` });
  const full = `${model.entity}/${project}/${model.name}`;
  // Step 0 is the base weights; an RL job without groups saves the next checkpoint.
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(job.status, job.error_message ?? '').toBe('COMPLETED');
  const [A, B] = [`${full}:step0`, `${full}:step${job.step}`];

  // Upload: a bad line is named, then the set goes in.
  await page.goto('/evals');
  await expect(page.getByRole('link', { name: 'Evals', exact: true }).first()).toHaveAttribute('aria-current', 'page');
  await page.getByTestId('eval-set-project').fill(project);
  await page.getByTestId('eval-set-name').fill('basics');
  await page.getByTestId('dataset-file-input').setInputFiles({
    name: 'bad.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from(`${SET.split('\n')[0]}\n{"messages": "nope"}\n`),
  });
  await page.getByTestId('eval-set-upload').click();
  await expect(page.getByTestId('eval-set-upload-error')).toContainText(/line 2/i);
  await page.getByTestId('dataset-file-input').setInputFiles({
    name: 'basics.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from(SET),
  });
  await page.getByTestId('eval-set-upload').click();
  await expect(page.getByTestId('eval-set-uploaded')).toContainText(`${project}/basics v1: 3 examples`);
  const row = page.getByTestId('eval-set-row').filter({ hasText: project });
  await expect(row.getByTestId('eval-set-examples')).toHaveText('3');
  // Its examples: the SFT line's assistant message became the reference.
  await row.getByTestId('eval-set-view').click();
  const examples = page.getByTestId('eval-example');
  await expect(examples).toHaveCount(3);
  await expect(examples.nth(2)).toContainText(/reference\s*hello/);
  await expectNoSeriousA11yViolations(page, 'the examples dialog');
  await page.keyboard.press('Escape');
  await expectNoSeriousA11yViolations(page, '/evals');

  // Start a run on both checkpoints.
  await row.getByTestId('eval-set-run').click();
  await expect(page).toHaveURL(/\/evals\/new\?set=/);
  await expect(page.getByTestId('eval-set-select')).not.toHaveValue('');
  // The newest trained model is offered first, with its checkpoints as toggles.
  const steps = page.getByTestId('target-step');
  await expect(steps).toHaveCount(2);
  await page.getByLabel('step 0', { exact: true }).check();
  await page.getByLabel(`step ${job.step}`, { exact: true }).check();
  await expect(page.getByTestId('chosen-targets')).toContainText('2 / 8');
  // A regex that does not compile is refused on its field before anything is sent.
  await page.getByTestId('add-scorer').click();
  const second = page.getByTestId('scorer').nth(1);
  await second.getByTestId('scorer-type').selectOption('regex');
  await second.getByTestId('scorer-pattern').fill('(');
  await page.getByTestId('eval-max-tokens').fill('8');
  await page.getByTestId('start-eval-run').click();
  await expect(second.getByTestId('scorer-pattern')).toHaveAttribute('aria-invalid', 'true');
  await expect(second.getByTestId('scorer-pattern')).toHaveAccessibleDescription(/Does not compile/);
  await expect(second.getByTestId('scorer-pattern')).toBeFocused();
  await expectNoSeriousA11yViolations(page, '/evals/new with errors');
  await shoot(page, 'new');
  await second.getByRole('button', { name: 'Remove scorer 2' }).click();
  await page.getByTestId('start-eval-run').click();
  await expect(page).toHaveURL(/\/evals\/runs\/[0-9a-f-]+$/);
  const runId = page.url().split('/').at(-1)!;

  // It runs to completion, its progress moving on the page.
  await expect(page.getByTestId('eval-run-status')).toHaveText('Completed', { timeout: 90_000 });
  await expect(page.getByTestId('eval-summary-row')).toHaveCount(2);

  // A client's own grades: example 0 and 2 pass at A and fail at B, example 1 the reverse.
  for (const scorer of ['grader', 'grader2']) {
    const res = await request.post(`/v1/preview/eval-runs/${runId}/scores`, {
      headers: auth(key),
      data: {
        scorer,
        scores: [
          { index: 0, target: A, score: 1 },
          { index: 1, target: A, score: 0 },
          { index: 2, target: A, score: 1, comment: 'says hello' },
          { index: 0, target: B, score: 0 },
          { index: 1, target: B, score: 1 },
          { index: 2, target: B, score: 0, comment: 'no greeting' },
        ],
      },
    });
    expect(res.status(), await res.text()).toBe(200);
  }
  await page.reload();

  // The summary: a row per checkpoint, a column per scorer.
  const summaryOf = (target: string, scorer: string) =>
    page.locator(
      `[data-testid="eval-summary-row"][data-target="${target}"] [data-testid="eval-summary-cell"][data-scorer="${scorer}"]`,
    );
  await expect(summaryOf(A, 'grader')).toContainText('66.7%');
  await expect(summaryOf(A, 'grader')).toContainText('2 / 3 passed');
  await expect(summaryOf(B, 'grader')).toContainText('33.3%');
  await expect(summaryOf(A, 'exact_match')).toContainText('/ 3 passed');
  // Score per checkpoint: one line per scorer over the two steps.
  const chart = page.locator('[data-testid="metric-chart-card"]');
  await expect(chart.getByRole('list', { name: 'Series' }).getByRole('listitem')).toHaveText([
    'exact_match',
    'grader',
    'grader2',
  ]);
  await expect(chart.locator('.recharts-line-curve')).toHaveCount(3);

  // Every example, each target's answer beside the reference.
  await expect(page.getByTestId('eval-result-row')).toHaveCount(3);
  await expect(page.getByTestId('eval-result-reference').first()).toHaveText('4');
  // The regressions from A to B, in the address.
  await expect(page.getByTestId('eval-target-a')).toHaveValue(A);
  await expect(page.getByTestId('eval-target-b')).toHaveValue(B);
  await page.getByTestId('eval-filter').getByText('Regressed').click();
  await expect(page).toHaveURL(/filter=regressed/);
  const rows = page.getByTestId('eval-result-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute('data-index', '0');
  await expect(rows.nth(1)).toHaveAttribute('data-index', '2');
  // The marks: grader passed at A, failed at B; the client's comment on demand.
  const cellOf = (r: number, target: string) =>
    rows.nth(r).locator(`[data-testid="eval-result-cell"][data-target="${target}"]`);
  await expect(cellOf(0, A).locator('[data-testid="eval-mark"][data-scorer="grader"]')).toHaveAttribute(
    'data-passed',
    'true',
  );
  await expect(cellOf(0, B).locator('[data-testid="eval-mark"][data-scorer="grader"]')).toHaveAttribute(
    'data-passed',
    'false',
  );
  const verdict = cellOf(1, B).getByTestId('eval-verdict').first();
  await verdict.locator('summary').click();
  await expect(verdict).toContainText('no greeting');
  await page.getByTestId('eval-filter').getByText('Improved').click();
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-index', '1');
  await page.getByTestId('eval-filter').getByText('Regressed').click();
  await expect(rows).toHaveCount(2);
  await expectNoSeriousA11yViolations(page, 'the eval run page');

  // The filtered view, shared: another browser with the same account sees the same two examples.
  const other = await browser.newContext({ storageState: await page.context().storageState() });
  const shared = await other.newPage();
  await shared.goto(page.url());
  await expect(shared.getByTestId('eval-result-row')).toHaveCount(2);
  await expect(shared.getByTestId('eval-filter').getByRole('radio', { name: 'Regressed' })).toBeChecked();
  await other.close();

  await shoot(page, 'run');
  await page.goto('/evals');
  await expect(page.getByTestId('eval-run-row').first()).toContainText('Completed');
  await shoot(page, 'evals');

  // From the first regressed example into the playground: its prompt and system message filled, both checkpoints.
  await page.goto(`/evals/runs/${runId}?filter=regressed`);
  await rows.first().getByTestId('eval-open-playground').click();
  await expect(page).toHaveURL(/\/playground\?/);
  const url = new URL(page.url());
  expect(url.searchParams.getAll('model')).toEqual([A, B]);
  await expect(page.getByTestId('composer')).toHaveValue('What is 2+2?');
  await expect(page.getByLabel('System prompt')).toHaveValue('Answer with a number only.');
  await expect(page.getByTestId('chat-pane')).toHaveCount(2);
  await expect(page.getByTestId('pane-model-step')).toHaveText([`Step 0`, `Step ${job.step}`]);
  // Sent, the prompt leaves the address (a reload shows the conversation's models only).
  await page.getByTestId('send').click();
  await expect.poll(() => new URL(page.url()).searchParams.has('prompt')).toBe(false);
  await expect(page.getByTestId('composer')).toHaveValue('');
});

test("the model page lists the model's eval runs and sets its auto-eval", async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const project = `ae-${uniqueId()}`;
  const model = await createModelViaApi(request, key, { project, name: `m-${uniqueId()}` });
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(job.status, job.error_message ?? '').toBe('COMPLETED');
  const upload = await request.post(`/v1/preview/eval-sets?project=${project}&name=checks`, {
    headers: auth(key),
    data: SET,
  });
  expect(upload.status(), await upload.text()).toBe(201);
  const set = (await upload.json()) as { id: string };
  const run = await request.post('/v1/preview/eval-runs', {
    headers: auth(key),
    data: {
      eval_set_id: set.id,
      targets: [`${model.entity}/${project}/${model.name}:step${job.step}`],
      scorers: [{ type: 'contains' }],
      sampling: { temperature: 0, max_tokens: 4 },
      name: 'nightly',
    },
  });
  expect(run.status(), await run.text()).toBe(201);

  await page.goto(`/models/${model.id}`);
  const card = page.getByTestId('model-evals');
  await expect(card.getByRole('link', { name: 'nightly' })).toBeVisible();
  await expect(card.getByTestId('auto-eval-state')).toContainText('Off');
  await card.getByTestId('auto-eval-edit').click();
  await card.getByTestId('eval-set-select').selectOption(set.id);
  await card.getByTestId('auto-eval-save').click();
  await expect(card.getByTestId('auto-eval-state')).toContainText(
    `On: each new checkpoint is scored on ${project}/checks v1`,
  );
  await expectNoSeriousA11yViolations(page, 'the model page with its Evals card');
  // The setting is the server's: a reload shows it, and the API returns it.
  await page.reload();
  await expect(card.getByTestId('auto-eval-state')).toContainText('exact_match');
  const stored = await request.get(`/v1/preview/models/${model.id}/auto-eval`, { headers: auth(key) });
  expect(((await stored.json()) as { auto_eval: { eval_set_id: string } }).auto_eval.eval_set_id).toBe(set.id);
  await card.getByTestId('auto-eval-off').click();
  await expect(card.getByTestId('auto-eval-state')).toContainText('Off');

  // The fine-tune form's "Evaluate each checkpoint": the job sets the auto-eval, and its checkpoint is scored.
  const sft = new SftLaunchPage(page);
  await sft.goto(model.id);
  await sft.chooseFile('train.jsonl', sftLines(4));
  await page.getByTestId('sft-eval-toggle').check();
  await expect(page.getByTestId('sft-eval-set')).toHaveValue(set.id);
  await expectNoSeriousA11yViolations(page, 'the fine-tune form with an eval set');
  await page.getByTestId('sft-eval').screenshot({ path: path.join(OUT, 'light-sft-eval-1280.png') });
  await sft.submit.click();
  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  const sftJob = await waitForJob(request, key, new URL(page.url()).pathname.split('/').at(-1)!, 90_000);
  expect(sftJob.status, sftJob.error_message ?? '').toBe('COMPLETED');
  await page.goto(`/models/${model.id}`);
  await expect(card.getByTestId('auto-eval-state')).toContainText(
    `On: each new checkpoint is scored on ${project}/checks v1`,
  );
  // The run the new checkpoint queued, named after its step, in the card's list.
  await expect(card.getByRole('link', { name: `auto: step ${sftJob.step}` })).toBeVisible({ timeout: 30_000 });

  // "All runs" opens the Evals page on this model's runs.
  await expect(card).toBeVisible();
  await card.scrollIntoViewIfNeeded();
  await card.screenshot({ path: path.join(OUT, 'light-model-evals-card-1280.png') });
  await card.getByTestId('model-evals-all').click();
  await expect(page).toHaveURL(new RegExp(`/evals\\?model_id=${model.id}`));
  await expect(page.getByTestId('eval-run-row')).toHaveCount(2);
  await expect(page.getByTestId('eval-run-row').filter({ hasText: 'nightly' })).toHaveCount(1);
});

test('an eval set version is deleted from its examples dialog, after a confirmation; the other version stays', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const project = `del-${uniqueId()}`;
  const ids: string[] = [];
  for (let v = 0; v < 2; v++) {
    const upload = await request.post(`/v1/preview/eval-sets?project=${project}&name=checks`, {
      headers: auth(key),
      data: SET,
    });
    expect(upload.status(), await upload.text()).toBe(201);
    ids.push(((await upload.json()) as { id: string }).id);
  }
  await page.goto('/evals');
  const row = page.getByTestId('eval-set-row').filter({ hasText: project });
  await expect(row.getByTestId('eval-set-version')).toHaveText(['v2', 'v1']);
  await row.getByRole('button', { name: 'View the examples of checks v1' }).click();
  await expect(page.getByTestId('eval-example')).toHaveCount(3);
  // The first click only asks; keeping it changes nothing.
  await page.getByTestId('eval-set-delete').click();
  await expect(page.getByTestId('eval-set-delete-area')).toContainText(
    'Delete v1 of checks and its finished eval runs?',
  );
  await expectNoSeriousA11yViolations(page, 'the delete confirmation in the examples dialog');
  await page.screenshot({ path: path.join(OUT, 'light-eval-set-delete-1280.png'), animations: 'disabled' });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(OUT, 'dark-eval-set-delete-390.png'), animations: 'disabled' });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole('button', { name: 'Keep it' }).click();
  await page.getByTestId('eval-set-delete').click();
  await page.getByTestId('eval-set-delete-confirm').click();
  await expect(page.getByTestId('eval-examples')).toBeHidden();
  await expect(row.getByTestId('eval-set-version')).toHaveText(['v2']);
  expect((await request.get(`/v1/preview/eval-sets/${ids[0]}`, { headers: auth(key) })).status()).toBe(404);
  expect((await request.get(`/v1/preview/eval-sets/${ids[1]}`, { headers: auth(key) })).status()).toBe(200);
});
