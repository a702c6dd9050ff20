import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, createRlJob, logGroups, seedRun, trajectoryGroup, waitForJob } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';

test('metric charts render, switch to a table, export CSV and survive log scale', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'charts', name: `run-${uniqueId()}` });
  const steps = await seedRun(request, key, model.id, 3);

  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.name).toHaveText(model.name);
  // reward first (train and val share it), then the other metrics of the run.
  await expect(m.chartCards.first()).toHaveAttribute('data-metric', 'reward');
  await expect(m.chart('reward')).toContainText('train');
  await expect(m.chart('reward')).toContainText('val');
  await expect(m.chartLines('reward').first()).toBeAttached();
  // One raw line per split: under 20 points a smoothed line would miss the values, so none is drawn.
  await expect(m.chartLines('reward')).toHaveCount(2);

  await m.logScale.check();
  await expect(m.chartLines('reward').first()).toBeAttached();
  await m.logScale.uncheck();

  await m.chart('reward').getByRole('button', { name: 'table' }).click();
  const table = m.chart('reward').getByTestId('metric-table');
  await expect(table).toBeVisible();
  await expect(table.locator('tbody tr')).toHaveCount(new Set(steps).size);

  const download = page.waitForEvent('download');
  await m
    .chart('reward')
    .getByRole('button', { name: /Download reward as CSV/ })
    .click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/reward\.csv$/);
  const csv = await (await import('node:fs/promises')).readFile((await file.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toBe('step,train/reward,val/reward');

  await expectNoSeriousA11yViolations(page);
});

test('checkpoints show names, best badge and actions; the model is deleted after typing its name', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'ckpt', name: `ck-${uniqueId()}` });
  await logGroups(request, key, model.id, 'val', [trajectoryGroup(0.5)]);
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));

  const m = new ModelPage(page);
  await m.goto(model.id);
  // A completed job wrote a checkpoint: it is listed with its step names and actions.
  await expect(m.checkpointRows.first()).toBeVisible();
  const step = job.step!;
  await expect(m.inferenceNames).toContainText(`${model.entity}/${model.project}/${model.name}:step${step}`);
  await expect(m.inferenceNames).toContainText(
    `wandb-artifact:///${model.entity}/${model.project}/${model.name}:step${step}`,
  );
  const row = page.locator(`[data-testid="checkpoint-row"][data-step="${step}"]`);
  await expect(row.getByRole('link', { name: `Open step ${step} in the playground` })).toHaveAttribute(
    'href',
    `/playground?model=${encodeURIComponent(`${model.entity}/${model.project}/${model.name}:step${step}`)}`,
  );
  await expect(m.jobRows).toHaveCount(1);
  // A job without groups trained nothing: neutral "No update", not a green "Completed".
  await expect(m.jobRows.first()).toContainText('No update');
  await expect(m.jobRows.first()).toContainText('the job had no trajectory groups');
  await expect(m.inferenceNames).toContainText(model.id);

  await m.deleteButton.click();
  await expect(m.deleteDialog).toBeVisible();
  const confirm = m.deleteDialog.getByRole('button', { name: 'Delete model' });
  await expect(confirm).toBeDisabled();
  await m.deleteNameInput.fill('not the name');
  await expect(confirm).toBeDisabled();
  await expectNoSeriousA11yViolations(page);
  await m.deleteNameInput.fill(model.name);
  await confirm.click();
  await expect(page).toHaveURL(/\/models$/);
  expect(
    (await request.get(`/v1/preview/models/${model.id}`, { headers: { Authorization: `Bearer ${key}` } })).status(),
  ).toBe(404);
});

test('checkpoints page forward and back by cursor', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'paging', name: `pg-${uniqueId()}` });
  // 21 checkpoints need 21 completed jobs; without a worker running jobs there is nothing to page.
  const first = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(first.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  for (let i = 0; i < 20; i++) await waitForJob(request, key, await createRlJob(request, key, model.id), 30_000);

  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.checkpointRows).toHaveCount(20);
  const firstStep = await m.checkpointRows.first().getAttribute('data-step');
  await page.getByTestId('checkpoints-next').click();
  await expect(page.getByTestId('checkpoints-page')).toHaveText('Page 2');
  await expect(m.checkpointRows.first()).not.toHaveAttribute('data-step', firstStep!);
  await page.getByTestId('checkpoints-prev').click();
  await expect(page.getByTestId('checkpoints-page')).toHaveText('Page 1');
  await expect(m.checkpointRows.first()).toHaveAttribute('data-step', firstStep!);
});

test('trajectories: text-only messages, best and worst, reward filter, paging, and a chart click opens a step', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'traj', name: `tr-${uniqueId()}` });
  // 22 groups: one more page than the first 20.
  const groups = Array.from({ length: 22 }, (_, i) => trajectoryGroup(0.1 + i * 0.02));
  const logged = await logGroups(request, key, model.id, 'train', groups);

  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.chartMarks('reward').first()).toBeAttached();
  // Clicking the reward chart opens the trajectories of the step under the pointer.
  // recharts handles pointer moves on the next animation frame: hover until the tooltip shows, then click.
  const surface = m.chart('reward').getByTestId('metric-chart').locator('svg.recharts-surface').first();
  await surface.hover();
  await expect(m.chart('reward').locator('.recharts-tooltip-wrapper')).toContainText(`Step ${logged.step}`);
  await surface.click();
  await expect(m.trajectoriesTab).toHaveAttribute('aria-selected', 'true');
  await expect(page).toHaveURL(new RegExp(`[?&]tab=trajectories(&|$)`));
  await expect(page).toHaveURL(new RegExp(`[?&]step=${logged.step}(&|$)`));

  await expect(m.trajectoryGroups).toHaveCount(20);
  await page.getByTestId('trajectories-load-more').click();
  await expect(m.trajectoryGroups).toHaveCount(22);

  // Best and worst side by side: the highest and lowest reward of the step.
  await expect(m.bestWorst.getByTestId('trajectory-best')).toContainText('reward 0.62');
  await expect(m.bestWorst.getByTestId('trajectory-worst')).toContainText('reward 0');

  // Untrusted content is text: the markup is visible as characters, no element is created, whitespace is kept.
  const system = m.bestWorst
    .getByTestId('trajectory-best')
    .locator('[data-role="system"] [data-testid="message-content"]');
  await expect(system).toContainText('You answer in <b>bold</b>?');
  await expect(system.locator('b')).toHaveCount(0);
  expect(await system.textContent()).toContain('\n    indented line');

  const firstGroup = m.trajectoryGroups.first();
  await expect(firstGroup.getByTestId('trajectory')).toHaveCount(3);
  await m.minReward.fill('0.1');
  await expect(firstGroup.getByTestId('trajectory')).toHaveCount(2);
  await expectNoSeriousA11yViolations(page);

  await page.reload();
  await expect(m.trajectoriesTab).toHaveAttribute('aria-selected', 'true');
  await expect(m.trajectoryGroups.first()).toBeVisible();
});

test('zooming into a downsampled chart fetches that step range in full detail', async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'charts', name: `long-${uniqueId()}` });
  // A 100k-step run is impractical to train here, so the history answers are stood in for: what is under test is
  // the page asking for the zoomed range and drawing what comes back (the server side has its route tests).
  const value = (step: number) => Math.exp(-step / 50_000) + 0.05 * Math.sin(step / 37);
  const overview = Array.from({ length: 1000 }, (_, i) => Math.round((i * 99_999) / 999)).map((s) => [s, value(s)]);
  const ranges: URLSearchParams[] = [];
  await page.route('**/history?**', async (route) => {
    const params = new URL(route.request().url()).searchParams;
    if (!params.has('from_step')) {
      await route.fulfill({
        json: { run_id: model.run_id, series: [{ name: 'train/loss', total_points: 100_000, points: overview }] },
      });
      return;
    }
    ranges.push(params);
    const from = Number(params.get('from_step'));
    const to = Number(params.get('to_step'));
    const points = Array.from({ length: to - from + 1 }, (_, i) => [from + i, value(from + i)]).slice(0, 600);
    await route.fulfill({
      json: { run_id: model.run_id, series: [{ name: 'train/loss', total_points: points.length, points }] },
    });
  });

  const m = new ModelPage(page);
  await m.goto(model.id);
  const card = m.chart('loss');
  await expect(m.chartLines('loss').first()).toBeAttached();
  await expect(card).toContainText('Downsampled');
  const yTicks = async () =>
    (await card.locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value').allTextContents()).map(
      Number,
    );
  await card.scrollIntoViewIfNeeded();
  await expect.poll(async () => Math.min(...(await yTicks()))).toBeLessThan(0.3);

  // Drag the brush's right handle far to the left: the chart zooms to the first few thousand steps.
  const handle = card.locator('.recharts-brush-traveller').last();
  // The handles are named by the steps they span, not recharts' "Min value: undefined".
  await expect(handle).toHaveAttribute('aria-label', /^Zoom: steps 0 to 99,999;/);
  await card.scrollIntoViewIfNeeded();
  const box = (await handle.boundingBox())!;
  const brush = (await card.locator('.recharts-brush').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(brush.x + brush.width * 0.03, box.y + box.height / 2, { steps: 12 });
  await page.mouse.up();
  await expect(card.getByTestId('chart-zoom')).toContainText('Steps 0–');
  // The y axis fits the rows in view (about 0.9 to 1.05 in the first steps), not the whole run's (down to 0.13).
  await expect.poll(async () => Math.min(...(await yTicks()))).toBeGreaterThan(0.8);

  await card.getByTestId('chart-load-detail').click();
  await expect.poll(() => ranges.length).toBe(1);
  expect(ranges[0].get('keys')).toBe('train/loss');
  expect(Number(ranges[0].get('from_step'))).toBe(0);
  const to = Number(ranges[0].get('to_step'));
  expect(to).toBeGreaterThan(0);
  expect(to).toBeLessThan(10_000);
  // Every step of the range is now drawn: the table lists them all and the chart is no longer downsampled.
  await expect(card).not.toContainText('Downsampled');
  await card.getByRole('button', { name: 'table' }).click();
  await expect(card.getByTestId('metric-table').locator('tbody tr')).toHaveCount(Math.min(600, to + 1));
  await card.getByRole('button', { name: 'chart' }).click();
  await card.getByRole('button', { name: 'Reset zoom' }).click();
  await expect(card).toContainText('Downsampled');
  await expect(card.getByTestId('chart-zoom')).toHaveCount(0);
  await expectNoSeriousA11yViolations(page, 'a zoomed chart');
});

test('trajectories: the steps that hold trajectories are listed newest first, and a click opens one', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'traj', name: `steps-${uniqueId()}` });
  // Two train groups and one val group per step; where no worker trains, every step is the same one.
  const logged = [...new Set(await seedRun(request, key, model.id, 2))].sort((a, b) => b - a);

  const m = new ModelPage(page);
  await m.goto(model.id, '?tab=trajectories');
  await expect(m.stepItems).toHaveCount(logged.length);
  await expect(m.stepItems.first()).toHaveAttribute('data-step', String(logged[0]));
  // Without a step in the URL the newest one is open.
  await expect(m.stepItems.first()).toHaveAttribute('aria-current', 'true');
  // One mean per split, never train and val mixed into one number.
  await expect(m.stepItems.first()).toContainText('train · 2 groups');
  await expect(m.stepItems.first()).toContainText('val · 1 group');
  await m.splitSelect.selectOption('val');
  await expect(m.stepItems.first()).not.toContainText('train');
  await m.splitSelect.selectOption('');
  await expect(m.trajectoryGroups.first()).toContainText(`step ${logged[0]}`);

  const oldest = logged.at(-1)!;
  await m.stepItem(oldest).click();
  await expect(page).toHaveURL(new RegExp(`step=${oldest}`));
  await expect(m.stepItem(oldest)).toHaveAttribute('aria-current', 'true');
  await expect(m.trajectoryGroups.first()).toContainText(`step ${oldest}`);
  await expect(m.stepSelect).toHaveValue(String(oldest));
  await expectNoSeriousA11yViolations(page);
});

test('trajectories: a model without any says how they get there', async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'traj', name: `none-${uniqueId()}` });
  const m = new ModelPage(page);
  await m.goto(model.id, '?tab=trajectories');
  await expect(page.getByRole('heading', { name: 'No trajectories yet' })).toBeVisible();
  await expect(page.getByText('POST …/log')).toBeVisible();
});

test("a checkpoint row's actions show their labels on hover and focus, and its copy menu copies every name of the step", async ({
  page,
  request,
  context,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'names', name: `nm-${uniqueId()}` });
  // A new model has step 0; a completed job adds step 1.
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(job.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  const latest = job.step!;
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.checkpoint(latest)).toBeVisible();
  // The sections above the table finish loading first: a hover while they still grow would shift the row out from
  // under the pointer, and the label closes on that pointer leave, as it should.
  await page.waitForLoadState('networkidle');
  const tooltip = page.getByRole('tooltip');

  // Hover shows the icon's label; leaving hides it.
  await m.deleteCheckpoint(latest).hover();
  await expect(tooltip).toHaveText(`Delete step ${latest}`);
  await m.name.hover();
  await expect(tooltip).toHaveCount(0);

  // Keyboard focus shows it too, and Escape hides it without moving focus.
  await m.copyNames(latest).focus();
  await page.keyboard.press('Tab');
  await expect(m.openInPlayground(latest)).toBeFocused();
  await expect(tooltip).toHaveText(`Open step ${latest} in the playground`);
  await expectNoSeriousA11yViolations(page, 'a checkpoint action tooltip');
  await page.screenshot({ path: 'test-results/screenshots/light-checkpoint-tooltip.png' });
  await page.keyboard.press('Escape');
  await expect(tooltip).toHaveCount(0);
  await expect(m.openInPlayground(latest)).toBeFocused();

  // The copy menu by keyboard: Enter opens on the first item, arrows move and wrap, Escape closes and focus returns.
  const full = `${model.entity}/${model.project}/${model.name}`;
  const names = [
    `${full}:step${latest}`,
    `wandb-artifact:///${full}:step${latest}`,
    full,
    `wandb-artifact:///${full}`,
    model.id,
  ];
  const trigger = m.copyNames(latest);
  await trigger.focus();
  await expect(trigger).toHaveAttribute('aria-haspopup', 'menu');
  await page.keyboard.press('Enter');
  await expect(m.copyMenu).toBeVisible();
  await expect(trigger).toHaveAttribute('aria-expanded', 'true');
  await expect(m.copyMenuItems).toHaveCount(names.length);
  for (const [i, name] of names.entries()) await expect(m.copyMenuItems.nth(i)).toContainText(name);
  await expect(m.copyMenuItems.first()).toBeFocused();
  await page.screenshot({ path: 'test-results/screenshots/light-checkpoint-copy-menu.png' });
  await page.keyboard.press('ArrowDown');
  await expect(m.copyMenuItems.nth(1)).toBeFocused();
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  await expect(m.copyMenuItems.last()).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(m.copyMenuItems.first()).toBeFocused();
  await expectNoSeriousA11yViolations(page, 'the copy menu');
  await page.keyboard.press('Escape');
  await expect(m.copyMenu).toHaveCount(0);
  await expect(trigger).toBeFocused();
  await expect(trigger).toHaveAttribute('aria-expanded', 'false');

  // Space opens it as well; Enter on an item copies that name exactly and gives focus back.
  await page.keyboard.press('Space');
  await expect(m.copyMenuItems.first()).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(m.copyMenu).toHaveCount(0);
  await expect(trigger).toBeFocused();
  expect(await clipboard()).toBe(full);
  await expect(m.checkpoint(latest).getByRole('status')).toHaveText('Copied the latest name to the clipboard');

  // Every item copies the string a client sends as `model`.
  for (const [i, name] of names.entries()) {
    await trigger.click();
    await m.copyMenuItems.nth(i).click();
    expect(await clipboard()).toBe(name);
  }

  // An older step offers only the names pinned to it: the others would reach the latest step.
  if (latest > 0) {
    await m.copyNames(0).click();
    await expect(m.copyMenuItems).toHaveCount(2);
    await m.copyMenuItems.nth(1).click();
    expect(await clipboard()).toBe(`wandb-artifact:///${full}:step0`);
  }
  // The same model answers under every one of those names.
  for (const name of names) {
    const res = await request.post('/v1/chat/completions', {
      headers: { Authorization: `Bearer ${key}` },
      data: { model: name, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 },
    });
    expect(res.status(), `${name}: ${await res.text()}`).toBe(200);
  }
});

test('trajectories: the same prompts at two steps, with how reward and length moved, side by side', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'traj', name: `compare-${uniqueId()}` });
  // The same three prompts logged at step 0 and, after a job, at step 1 with higher rewards.
  await logGroups(request, key, model.id, 'train', [trajectoryGroup(0.2)]);
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id), 60_000);
  expect(job.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  await logGroups(request, key, model.id, 'train', [trajectoryGroup(0.7)]);

  const m = new ModelPage(page);
  await m.goto(model.id, `?tab=trajectories&step=${job.step}`);
  const compare = page.getByTestId('step-compare');
  await expect(compare.getByLabel(`Step ${job.step} with step`)).toHaveValue('0');
  const rows = compare.getByTestId('step-compare-row');
  await expect(rows).toHaveCount(3);
  // Each prompt's single rollout moved from 0.1/0.2/0.3 to 0.6/0.7/0.8: +0.5 each.
  await expect(rows.getByTestId('reward-delta')).toHaveText(['+0.5', '+0.5', '+0.5']);
  await expect(rows.first()).toContainText('±0');
  await rows.first().getByRole('button', { name: 'Side by side' }).click();
  const pair = compare.getByTestId('step-compare-pair');
  await expect(pair).toContainText('Step 0 · best of 1');
  await expect(pair).toContainText(`Step ${job.step} · best of 1`);
  await expectNoSeriousA11yViolations(page, 'two steps side by side');
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await compare.screenshot({ path: `test-results/screenshots/${theme}-step-compare.png`, animations: 'disabled' });
  }

  // On a phone each prompt is a card, and its prompt is still there to read (a zero-width cell once hid it).
  await page.setViewportSize({ width: 390, height: 844 });
  const prompt = rows.first().getByTestId('step-compare-prompt');
  await expect(prompt).toHaveText(/\S/);
  expect((await prompt.boundingBox())!.width).toBeGreaterThan(100);
});
