import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, getJob, startLongSftJob, trajectoryGroup, waitForJob } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { AppShell } from '../pages/app-shell';

test('the Jobs page lists running jobs first, follows them live, and shows a cancel as Cancelled', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const auth = { Authorization: `Bearer ${key}` };

  // A finished RL job on one model.
  const rlModel = await createModelViaApi(request, key, { project: 'jobs', name: `rl-${uniqueId()}` });
  const rl = await request.post('/v1/preview/training-jobs', {
    headers: auth,
    data: {
      model_id: rlModel.id,
      trajectory_groups: [trajectoryGroup(0.4, 4), trajectoryGroup(0.6, 4)],
      experimental_config: { allow_training_without_logprobs: true },
    },
  });
  const rlId = ((await rl.json()) as { id: string }).id;
  expect((await waitForJob(request, key, rlId, 60_000)).status).toBe('COMPLETED');
  // Then one in which every trajectory got the same reward: it completes without changing the weights.
  const tied = { trajectories: trajectoryGroup(0.5, 3).trajectories.map((t) => ({ ...t, reward: 0.5 })) };
  const noop = await request.post('/v1/preview/training-jobs', {
    headers: auth,
    data: {
      model_id: rlModel.id,
      trajectory_groups: [tied, tied],
      experimental_config: { allow_training_without_logprobs: true },
    },
  });
  const noopId = ((await noop.json()) as { id: string }).id;
  expect((await waitForJob(request, key, noopId, 60_000)).status).toBe('COMPLETED');

  // A long SFT job on another model: one example per step, far more steps than the spec waits for.
  const sftModel = await createModelViaApi(request, key, { project: 'jobs', name: `sft-${uniqueId()}` });
  const { jobId: sftId, trainingDataUrl: training_data_url } = await startLongSftJob(request, key, sftModel.id, {
    project: 'jobs',
    name: 'long',
  });

  await page.goto('/jobs');
  await expect(page.getByRole('heading', { level: 1, name: 'Jobs' })).toBeVisible();
  const activeCard = page.getByRole('region', { name: 'Running and queued' });
  const active = activeCard.getByTestId('entity-job-row');
  await expect(active).toHaveCount(1);
  await expect(active.first()).toContainText(sftModel.name);
  await expect(active.first()).toContainText('batch 1');
  // What each job trained on: the dataset by name and size, or the RL job's groups.
  await expect(active.first().getByTestId('entity-job-dataset')).toHaveText(training_data_url.split('/').at(-1)!);
  await expect(active.first()).toContainText('400 examples');
  await expect(active.first().getByTestId('job-status')).toHaveText(/Queued|Running/);

  const all = page.getByRole('region', { name: 'All jobs' }).getByTestId('entity-job-row');
  await expect(all).toHaveCount(3);
  // Newest first after the running job: the no-op RL job is a neutral "No update", the one that trained "Completed".
  await expect(all.nth(1)).toContainText(rlModel.name);
  await expect(all.nth(1).getByTestId('job-status')).toHaveText('No update');
  await expect(all.nth(1).getByTestId('entity-job-no-update')).toHaveText('the weights did not change');
  await expect(all.nth(1)).toContainText('No gradient steps');
  await expect(all.nth(2).getByTestId('job-status')).toHaveText('Completed');
  await expect(all.nth(2)).toContainText('2 trajectory groups');
  await expectNoSeriousA11yViolations(page, 'the Jobs page');

  // Running jobs are in the quick switcher too.
  const shell = new AppShell(page);
  await shell.openPalette();
  await shell.paletteInput.fill(sftModel.name);
  await expect(shell.paletteOption(`SFT job on ${sftModel.name}`)).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(shell.palette).toBeHidden();

  // Cancelled from a client: the page follows without a reload, and the cancel is not shown as a failure.
  const cancel = await request.post(`/v1/preview/training-jobs/${sftId}/cancel`, { headers: auth });
  expect(cancel.status()).toBe(200);
  await expect(activeCard.getByTestId('no-active-jobs')).toBeVisible({ timeout: 15_000 });
  await expect(all.first().getByTestId('job-status')).toHaveText('Cancelled', { timeout: 15_000 });

  // The status filter narrows the list.
  await page.getByTestId('jobs-status-filter').getByText('Completed', { exact: true }).click();
  await expect(all).toHaveCount(2);
  await expect(all.first()).toContainText(rlModel.name);

  // The job's own page says it was cancelled, not that it failed.
  await page.getByTestId('jobs-status-filter').getByText('Failed or cancelled').click();
  await all.first().getByRole('link', { name: 'SFT job' }).click();
  await expect(page.getByTestId('job-cancelled')).toBeVisible();
  await expect(page.getByTestId('job-status')).toHaveText('Cancelled');
  await expect(page.getByTestId('job-error')).toHaveCount(0);

  // On a phone each job is a card: every cell a line with its column's name, nothing cut off at the side.
  await page.goto('/jobs');
  await page.setViewportSize({ width: 390, height: 844 });
  const card = all.first();
  await expect(card).toBeVisible();
  expect(await card.evaluate((el) => getComputedStyle(el).display)).toBe('block');
  const modelCell = card.locator('td').nth(1);
  expect(await modelCell.evaluate((el) => getComputedStyle(el, '::before').content)).toBe('"Model"');
  const box = (await card.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(390);
});

test('a queued job says what it waits for, and a running job how long it has run and has left', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const auth = { Authorization: `Bearer ${key}` };
  const model = await createModelViaApi(request, key, { project: 'jobs', name: `wait-${uniqueId()}` });
  // Jobs of one model run one at a time: the second waits for the first.
  const dataset = { project: 'jobs', name: 'wait' };
  const { jobId: first } = await startLongSftJob(request, key, model.id, dataset);
  const { jobId: second } = await startLongSftJob(request, key, model.id, dataset);
  await expect
    .poll(async () => (await getJob(request, key, first)).completed_steps, { timeout: 30_000 })
    .toBeGreaterThan(0);

  await page.goto(`/jobs/${second}`);
  await expect(page.getByTestId('job-status')).toHaveText('Queued');
  await expect(page.getByTestId('job-waiting-reason')).toHaveText(/earlier job of this model/);
  await page.goto('/jobs');
  const active = page.getByRole('region', { name: 'Running and queued' });
  await expect(active.getByTestId('entity-job-waiting')).toContainText('earlier job of this model');

  await page.goto(`/jobs/${first}`);
  await expect(page.getByTestId('job-status')).toHaveText('Running');
  await expect(page.getByTestId('job-duration')).toHaveText(/so far, about .+ left/);

  for (const id of [second, first])
    expect((await request.post(`/v1/preview/training-jobs/${id}/cancel`, { headers: auth })).status()).toBe(200);
});

test('the Jobs page filters by kind, project and model, searches, and keeps the filters in the address', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const auth = { Authorization: `Bearer ${key}` };
  const alpha = await createModelViaApi(request, key, { project: 'alpha', name: `tutor-${uniqueId()}` });
  const beta = await createModelViaApi(request, key, { project: 'beta', name: `helper-${uniqueId()}` });
  const jobIds: Record<string, string> = {};
  for (const [name, model] of [
    ['alpha', alpha],
    ['beta', beta],
  ] as const) {
    const res = await request.post('/v1/preview/training-jobs', {
      headers: auth,
      data: {
        model_id: model.id,
        trajectory_groups: [trajectoryGroup(0.4, 2)],
        experimental_config: { allow_training_without_logprobs: true },
      },
    });
    jobIds[name] = ((await res.json()) as { id: string }).id;
  }
  await page.goto(`/jobs`);
  const rows = page.getByRole('table', { name: 'All jobs, newest first' }).locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await page.getByTestId('jobs-project-filter').selectOption('beta');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(beta.name);
  await expect(page).toHaveURL(/project=beta/);
  // The address keeps the filter: a reload shows the same list.
  await page.reload();
  await expect(page.getByTestId('jobs-project-filter')).toHaveValue('beta');
  await expect(rows).toHaveCount(1);
  await page.getByTestId('jobs-project-filter').selectOption('');
  await page.getByTestId('jobs-search').fill(alpha.name.slice(0, 8));
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(alpha.name);
  await expect(page).toHaveURL(/q=tutor-/);
  await page.getByTestId('jobs-search').fill('');
  await page.getByTestId('jobs-model-filter').selectOption(beta.id);
  await expect(rows).toHaveCount(1);
  await page.getByTestId('jobs-kind-filter').selectOption('sft');
  await expect(page.getByText('No job matches these filters')).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'the filtered Jobs page');
});
