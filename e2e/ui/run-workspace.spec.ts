import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import type { APIRequestContext } from '@playwright/test';
import { createModelViaApi, createRlJob, logGroups, waitForJob } from '../fixtures/seed';
import { jobCreatedSchema } from '@/lib/schemas/training-jobs';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';

/*
 * The model page as the run workspace (issue "The run workspace"): it must tell, on its own, whether a run is
 * stalled (no trainable groups), reward-hacked or improving, and follow new jobs without a reload.
 */

const OUT = path.resolve('test-results/screenshots');

/** A group whose trajectories all get `reward`, with a logged `correct` metric: nothing for RL to learn from. */
function flatGroup(reward: number, correct: number, size = 2) {
  return {
    trajectories: Array.from({ length: size }, (_, i) => ({
      reward,
      metrics: { correct },
      messages_and_choices: [
        { role: 'user', content: `Prompt ${i}: say something long` },
        { finish_reason: 'stop', index: 0, logprobs: null, message: { role: 'assistant', content: `Answer ${i}` } },
      ],
    })),
  };
}

/** A group with a reward spread around `reward`. */
function spreadGroup(reward: number, correct: number) {
  const g = flatGroup(reward, correct, 3);
  g.trajectories.forEach((t, i) => (t.reward = Number((reward + (i - 1) * 0.05).toFixed(4))));
  return g;
}

/** An RL job that trains on text alone (these trajectories carry no logprobs), so its groups move the weights. */
async function trainingJob(request: APIRequestContext, key: string, modelId: string, groups: unknown[]) {
  const res = await request.post('/v1/preview/training-jobs', {
    headers: { Authorization: `Bearer ${key}` },
    data: {
      model_id: modelId,
      trajectory_groups: groups,
      experimental_config: { allow_training_without_logprobs: true },
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  return jobCreatedSchema.parse(await res.json()).id;
}

async function shoot(page: Page, name: string) {
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark)/);
    await page.screenshot({ path: path.join(OUT, `${theme}-${name}.png`), fullPage: true, animations: 'disabled' });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('an RL job in which no group had a reward spread is "No update", and tied rewards are said to tie', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'guard', name: `noop-${uniqueId()}` });
  const groups = [flatGroup(1, 1), flatGroup(0, 0), flatGroup(0.5, 1)];
  await logGroups(request, key, model.id, 'train', groups);
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id, groups), 60_000);
  expect(job.status).toBe('COMPLETED');
  expect(job.num_sequences).toBe(0);

  const m = new ModelPage(page);
  await m.goto(model.id);
  const verdict = page.getByTestId('run-verdict');
  await expect(verdict).toHaveText('No update: 0 of 3 groups had a reward spread');
  await expect(verdict).toHaveAttribute('data-kind', 'stalled');
  await expect(page.getByTestId('summary-job').getByTestId('job-status')).toHaveText('No update');
  await expect(m.jobRows.first().getByTestId('job-status')).toHaveText('No update');
  await expect(m.jobRows.first()).toContainText('0 of 3 groups had a reward spread');
  await expect(m.jobRows.first()).not.toContainText('Completed');
  // The share of groups without a spread is charted with the policy's health, not hidden.
  await expect(page.getByTestId('metric-section-policy')).toContainText('zero_advantage_share');
  // No val metric: no best checkpoint, and a hint instead of crowning a train metric.
  await expect(page.getByTestId('summary-best')).toContainText('None chosen');
  await expect(page.getByTestId('best-hint')).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'a stalled run');
  await shoot(page, 'workspace-noop');

  await m.trajectoriesTab.click();
  await m.splitSelect.selectOption('train');
  await m.minReward.fill('abc');
  await expect(page.getByTestId('trajectory-filter-error')).toHaveText('Enter a number, e.g. 0.5');
  await expect(m.minReward).toHaveAttribute('aria-invalid', 'true');
  await m.minReward.fill('');
  await expect(page.getByTestId('trajectory-preview').first()).toContainText('Answer');
  await expect(page.getByTestId('trajectory-reward-bar').first()).toBeAttached();

  // The job's own page says the same, not a green "Completed" with a full bar of 0 / 0 steps.
  await page.goto(`/jobs/${job.id}`);
  await expect(page.getByTestId('job-status')).toHaveText('No update');
  await expect(
    page.getByRole('status').filter({ hasText: 'No update: 0 of 3 groups had a reward spread' }),
  ).toBeVisible();
  await expect(page.getByTestId('job-no-update')).toContainText('the weights did not change');
  await expect(page.getByRole('progressbar', { name: 'Training progress' })).toHaveCount(0);
  await expectNoSeriousA11yViolations(page, 'a no-op job page');
  await shoot(page, 'job-noop');
});

test('a step whose rewards all tie says so instead of one trajectory as both best and worst', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'guard', name: `tie-${uniqueId()}` });
  await logGroups(request, key, model.id, 'val', [flatGroup(0.5, 1), flatGroup(0.5, 1)]);
  const m = new ModelPage(page);
  await m.goto(model.id, '?tab=trajectories');
  await expect(page.getByTestId('rewards-tie')).toContainText('Every reward is 0.5');
  await expect(m.bestWorst).toHaveCount(0);
  await expectNoSeriousA11yViolations(page, 'tied rewards');
});

test('a reward-hacked run: reward rises while a logged metric falls, and the card links its trajectories', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'guard', name: `hacked-${uniqueId()}` });
  // Four steps: train reward 0.2 → 0.9 while `correct` drops 1 → 0; val logged too, so a best checkpoint exists.
  const plan = [
    [0.2, 1],
    [0.45, 0.7],
    [0.7, 0.3],
    [0.9, 0],
  ] as const;
  // The job's own groups are its train metrics, at the step that produced them (docs/contract.md §2.6).
  for (let i = 0; i < plan.length; i++) {
    const [reward, correct] = plan[i];
    await logGroups(request, key, model.id, 'val', [spreadGroup(0.5 - i * 0.05, correct)]);
    const groups = [spreadGroup(reward, correct), spreadGroup(reward, correct)];
    const job = await waitForJob(request, key, await trainingJob(request, key, model.id, groups), 60_000);
    expect(job.status).toBe('COMPLETED');
    expect(job.num_sequences).toBeGreaterThan(0);
  }

  const m = new ModelPage(page);
  await m.goto(model.id);
  const card = page.getByTestId('reward-hacking-card');
  await expect(card).toBeVisible();
  await expect(card).toContainText('train/reward');
  await expect(card).toContainText('train/correct');
  await expect(page.getByTestId('run-verdict')).toHaveAttribute('data-kind', 'hacked');
  // Best by a val metric, with the reason.
  await expect(page.getByTestId('summary-best')).toContainText('val/reward');
  await expect(m.bestMetric).toHaveValue('val/reward');
  // Sections: reward (with the logged metric) first; constant series folded into one row.
  await expect(page.getByTestId('metric-section-reward').getByTestId('metric-chart-card')).not.toHaveCount(0);
  await expect(page.getByTestId('metric-section-reward')).toContainText('correct');
  // Behind each reward line, the band where the middle 80 % of its trajectories' rewards lie (train and val).
  const rewardChart = m.chart('reward');
  await expect(rewardChart.locator('path.recharts-area-area')).toHaveCount(2);
  await rewardChart.scrollIntoViewIfNeeded();
  const box = (await rewardChart.locator('svg.recharts-surface').first().boundingBox())!;
  await page.mouse.move(box.x + box.width - 20, box.y + box.height / 3);
  await expect(rewardChart.getByTestId('chart-tooltip-band').first()).toContainText('p10–p90');
  await expectNoSeriousA11yViolations(page, 'a reward-hacked run');
  await shoot(page, 'workspace-hacked');
  // One signal: train/correct. The workers' speed metrics (train/step_seconds fell too) are not signals.
  await expect(card.getByRole('listitem')).toHaveCount(1);

  // The link compares where the rise began with where it ended: the prompts whose reward moved most come first.
  const link = card.getByTestId('hacking-trajectories');
  const [, from, to] = (await link.textContent())!.match(/step (\d+) and step (\d+)/)!;
  expect(Number(from)).toBeLessThan(Number(to));
  await link.click();
  await expect(m.trajectoriesTab).toHaveAttribute('aria-selected', 'true');
  await expect(m.splitSelect).toHaveValue('train');
  await expect(m.stepSelect).toHaveValue(to);
  await expect(page.getByTestId('compare-step')).toHaveValue(from);
  await expect(page.getByTestId('step-compare')).toBeInViewport();
  await expect.poll(() => new URL(page.url()).searchParams.get('compare')).toBe(from);
  await expect(m.trajectoryGroups.first()).toBeVisible();
  await expect(page.getByTestId('step-split-means').first()).not.toContainText('val');
  // J and K walk the trajectory rows, Enter opens one.
  const rows = page.locator('[data-testid="trajectory"] > summary');
  await page.keyboard.press('j');
  await expect(rows.first()).toBeFocused();
  await page.keyboard.press('j');
  await expect(rows.nth(1)).toBeFocused();
  await page.keyboard.press('k');
  await expect(rows.first()).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-testid="trajectory"]').first()).toHaveAttribute('open', '');
  await shoot(page, 'workspace-trajectories');
});

test('the model page follows a job started from the API, and its checkpoint, without a reload', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'live', name: `live-${uniqueId()}` });
  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(page.getByTestId('summary-job')).toContainText('No training jobs yet');
  await expect(m.checkpointRows).toHaveCount(1);

  await logGroups(request, key, model.id, 'train', [spreadGroup(0.4, 1)]);
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id), 60_000);
  expect(job.status).toBe('COMPLETED');

  // Idle polling starts at 5 s: the new job, its checkpoint and the new latest step arrive on their own.
  await expect(m.jobRows).toHaveCount(1, { timeout: 20_000 });
  await expect(page.getByTestId('summary-job')).toContainText('RL job');
  await expect(m.checkpointRows).toHaveCount(2, { timeout: 20_000 });
  await expect(m.latestStep).toHaveText('Latest step 1');
  await expect(m.chartCards.first()).toHaveAttribute('data-metric', 'reward', { timeout: 20_000 });
  await expectNoSeriousA11yViolations(page, 'the live model page');
});

test('a click on a val point of the reward chart opens the val trajectories, not every split', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'guard', name: `split-${uniqueId()}` });
  await logGroups(request, key, model.id, 'train', [spreadGroup(0.9, 1)]);
  await logGroups(request, key, model.id, 'val', [spreadGroup(0.1, 0)]);

  const m = new ModelPage(page);
  await m.goto(model.id);
  const dots = m.chart('reward').locator('circle.recharts-dot');
  await expect(dots).toHaveCount(2);
  await m.chart('reward').scrollIntoViewIfNeeded();
  // The lower dot is val (reward 0.1 against train's 0.9).
  const boxes = await Promise.all([0, 1].map(async (i) => (await dots.nth(i).boundingBox())!));
  const val = boxes[0].y > boxes[1].y ? boxes[0] : boxes[1];
  const at = { x: val.x + val.width / 2, y: val.y + val.height / 2 };
  // recharts handles pointer moves on the next animation frame: hover until the tooltip shows, then click.
  await page.mouse.move(at.x, at.y, { steps: 4 });
  await expect(m.chart('reward').locator('.recharts-tooltip-wrapper')).toContainText('Step 0');
  await page.mouse.click(at.x, at.y);
  await expect(m.trajectoriesTab).toHaveAttribute('aria-selected', 'true');
  await expect(m.splitSelect).toHaveValue('val');
  await expect(m.trajectoryGroups).toHaveCount(1);
  await expect(m.trajectoryGroups.first()).toContainText('val');

  // And the upper dot, train, opens train.
  await m.overviewTab.click();
  await m.chart('reward').scrollIntoViewIfNeeded();
  const again = await Promise.all([0, 1].map(async (i) => (await dots.nth(i).boundingBox())!));
  const train = again[0].y < again[1].y ? again[0] : again[1];
  const trainAt = { x: train.x + train.width / 2, y: train.y + train.height / 2 };
  await page.mouse.move(trainAt.x, trainAt.y, { steps: 4 });
  await expect(m.chart('reward').locator('.recharts-tooltip-wrapper')).toContainText('Step 0');
  await page.mouse.click(trainAt.x, trainAt.y);
  await expect(m.splitSelect).toHaveValue('train');
});

test("the training curve puts every job's gradient steps on one axis; a checkpoint's flag shows that checkpoint", async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'curve', name: `curve-${uniqueId()}` });
  const jobs = [];
  for (const reward of [0.3, 0.6]) {
    const id = await trainingJob(request, key, model.id, [spreadGroup(reward, 1), spreadGroup(reward + 0.1, 1)]);
    const job = await waitForJob(request, key, id, 60_000);
    expect(job.status).toBe('COMPLETED');
    jobs.push(job);
  }
  const total = jobs.reduce((n, j) => n + j.completed_steps, 0);

  const m = new ModelPage(page);
  await m.goto(model.id);
  const curve = page.getByTestId('training-curve');
  await expect(curve.getByRole('heading', { name: 'Training curve' })).toBeVisible();
  await expect(curve).toContainText(`All ${total} gradient steps of 2 jobs`);
  const loss = curve.locator('[data-testid="metric-chart-card"][data-metric="loss"]');
  await expect(loss.locator('path.recharts-line-curve').first()).toBeAttached();
  // Its table lists every gradient step of both jobs, numbered on one axis.
  await loss.getByRole('button', { name: 'Table' }).click();
  await expect(loss.getByTestId('metric-table').locator('tbody tr')).toHaveCount(total);
  await expect(loss.getByRole('columnheader', { name: 'Gradient step' })).toBeVisible();
  await loss.getByRole('button', { name: 'Chart' }).click();

  const flag = loss.getByRole('button', { name: 'Checkpoint step 2' });
  await expect(loss.getByRole('button', { name: 'Checkpoint step 1' })).toBeVisible();
  await flag.click();
  const panel = page.getByTestId('curve-checkpoint');
  await expect(panel).toContainText('Step 2');
  await expect(panel).toContainText(`from the RL job ${jobs[1].id.slice(0, 8)}`);
  await expect(panel).toContainText(`gradient steps ${jobs[0].completed_steps + 1}–${total}`);
  await expect(panel.getByRole('link', { name: 'Fine-tune from step 2' })).toHaveAttribute('href', /from=2/);
  await expect(flag).toHaveAttribute('aria-pressed', 'true');
  await expectNoSeriousA11yViolations(page, 'the training curve with a checkpoint chosen');
  await shoot(page, 'model-training-curve');
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await curve.screenshot({
      path: path.join(OUT, `${theme}-model-training-curve-section.png`),
      animations: 'disabled',
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  // The keyboard works the flags too: Enter on the chosen one closes it.
  await flag.focus();
  await page.keyboard.press('Enter');
  await expect(panel).toHaveCount(0);
});
