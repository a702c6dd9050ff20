import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, trajectoryGroup, waitForJob } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { JobPage } from '../pages/job-page';
import { ModelPage } from '../pages/model-page';

const TERMINAL = /Completed|Failed/;

async function rlJob(
  request: import('@playwright/test').APIRequestContext,
  key: string,
  modelId: string,
  data: object,
) {
  const res = await request.post('/v1/preview/training-jobs', {
    headers: { Authorization: `Bearer ${key}` },
    data: { model_id: modelId, ...data },
  });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

test('the job page follows a job live and shows its events, loss chart and config', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'jobs', name: `job-${uniqueId()}` });
  // 2 groups × 14 trajectories: one gradient step each, more events than one page of 25.
  const jobId = await rlJob(request, key, model.id, {
    trajectory_groups: [trajectoryGroup(0.4, 14), trajectoryGroup(0.6, 14)],
    experimental_config: { allow_training_without_logprobs: true },
  });

  const job = new JobPage(page);
  await job.goto(jobId);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('RL training job');
  await expect(job.status).toHaveText(/Queued|Running|Completed|Failed/);
  await expect(job.config).toContainText('learning_rate');
  await expect(job.modelLink).toHaveText(model.name);

  const final = await waitForJob(request, key, jobId, 90_000);
  expect(final.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  // The live tail catches up without a reload.
  await expect(job.status).toHaveText('Completed', { timeout: 15_000 });
  // Newest first by default: the live end on top.
  await expect(job.eventRows.first()).toContainText('training_ended');
  await expect(job.eventsTable.getByRole('columnheader', { name: '#' })).toHaveCount(0);
  await expect(page.getByTestId('job-new-step')).toHaveText(String(final.step));
  await expect(
    page.locator('[data-testid="metric-chart-card"][data-metric="loss"] path.recharts-line-curve').first(),
  ).toBeAttached();
  // 28 trajectories with logprobs allowed: one gradient step each, enough points for smoothing to apply.
  expect(final.completed_steps).toBeGreaterThanOrEqual(20);
  // Smoothed, the raw series stays drawn behind the smoothed line, faint in light and still visible in dark.
  await page.getByTestId('chart-smoothing').fill('0.6');
  const raw = page.locator('[data-testid="metric-chart-card"][data-metric="loss"] .tb-raw-series path').first();
  const opacity = () => raw.evaluate((el) => getComputedStyle(el).strokeOpacity);
  await expect.poll(opacity).toBe('0.3');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(opacity).toBe('0.6');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.getByTestId('chart-smoothing').fill('0');
  // training_started, one gradient_step per completed step, training_ended.
  if (final.completed_steps + 2 > 25) {
    await expect(job.eventRows).toHaveCount(25);
    await page.getByTestId('events-next').click();
    await expect(page.getByTestId('events-page')).toHaveText('Page 2');
    await expect(job.eventRows.last()).toContainText('training_started');
    await page.getByTestId('events-prev').click();
    await expect(job.eventRows.first()).toContainText('training_ended');
  }
  // Chronological on request, numbered, from the first page again; the URL keeps the choice.
  await job.eventOrder.getByText('Oldest first').click();
  await expect(job.eventRows.first()).toContainText('training_started');
  await expect(job.eventsTable.getByRole('columnheader', { name: '#' })).toHaveCount(1);
  await expect.poll(() => new URL(page.url()).searchParams.get('events')).toBe('oldest');

  // One type only, kept in the URL across a reload.
  await page.getByTestId('event-type-filter').selectOption('training_ended');
  await expect(job.eventRows).toHaveCount(1);
  await expect(job.eventRows.first()).toContainText('training_ended');
  await page.getByTestId('event-type-filter').selectOption('gradient_step');
  await expect(job.eventRows.first()).toContainText('gradient_step');
  await expect(job.eventRows.filter({ hasNotText: 'gradient_step' })).toHaveCount(0);
  await expect.poll(() => new URL(page.url()).searchParams.get('event_type')).toBe('gradient_step');
  await page.reload();
  await expect(page.getByTestId('event-type-filter')).toHaveValue('gradient_step');
  await expect(job.eventRows.first()).toContainText('gradient_step');
  await expect(job.eventRows.filter({ hasNotText: 'gradient_step' })).toHaveCount(0);
  await page.getByTestId('event-type-filter').selectOption('training_failed');
  await expect(page.getByText('No training_failed events')).toBeVisible();
  await page.getByTestId('event-type-filter').selectOption('');
  await job.eventOrder.getByText('Newest first').click();
  await expect(job.eventRows.first()).toContainText('training_ended');
  await expectNoSeriousA11yViolations(page);

  // The model page lists the job with its status.
  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.jobRows.first()).toContainText(TERMINAL);
});

test('a failed job shows its full error', async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'jobs', name: `fail-${uniqueId()}` });
  // A logprob on a token the model does not have: RL training refuses the data, and the job fails saying where.
  const group = trajectoryGroup(0.5, 2);
  for (const t of group.trajectories) {
    const choice = t.messages_and_choices[2] as { logprobs: unknown };
    choice.logprobs = { content: [{ token: 'token_id:999999999', logprob: -1, top_logprobs: [] }] };
  }
  const jobId = await rlJob(request, key, model.id, { trajectory_groups: [group] });
  const final = await waitForJob(request, key, jobId, 30_000);
  expect(final.status, JSON.stringify(final)).toBe('FAILED');
  expect(final.error_message).toContain("is not in the model's vocabulary");

  const job = new JobPage(page);
  await job.goto(jobId);
  await expect(job.status).toHaveText('Failed');
  await expect(job.error).toHaveText(final.error_message!);
  await expect(job.cancelButton).toHaveCount(0);

  // Resubmit queues the same job again and opens it; it fails the same way (the data is the same).
  await page.getByTestId('resubmit-job').click();
  await expect(page).not.toHaveURL(new RegExp(jobId));
  const newId = page.url().match(/\/jobs\/([0-9a-f-]{36})/)?.[1];
  expect(newId).toBeTruthy();
  const again = await waitForJob(request, key, newId!, 30_000);
  expect(again.error_message).toBe(final.error_message);
  await expect(job.status).toHaveText('Failed');
  await expect(page.getByTestId('job-config')).toContainText('resubmitted_from');
});

test('cancelling asks first, then ends the job', async ({ page, request }) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'jobs', name: `cancel-${uniqueId()}` });
  const jobId = await rlJob(request, key, model.id, {
    trajectory_groups: Array.from({ length: 8 }, (_, i) => trajectoryGroup(0.3 + i * 0.05, 12)),
    experimental_config: { allow_training_without_logprobs: true },
  });

  const job = new JobPage(page);
  await job.goto(jobId);
  await expect(job.status).toBeVisible();
  // The job may finish at any moment: the button is gone once it has, and that is a correct page too.
  const opened = await job.cancelButton.click({ timeout: 3_000 }).then(
    () => true,
    () => false,
  );
  if (!opened) {
    await expect(job.status).toHaveText(TERMINAL);
    return;
  }
  await expect(job.dialog).toContainText('Cancel this job?');
  // Not two buttons both saying "Cancel" (issue 41).
  await expect(job.dialog.getByRole('button', { name: 'Keep running' })).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'the cancel dialog');
  await job.dialog.getByRole('button', { name: 'Cancel job' }).click();
  await expect(job.dialog).toBeHidden();
  // Cancelling a job that completed meanwhile leaves it completed; otherwise it ends as Cancelled, a neutral
  // state and not a failure.
  await expect(job.status).toHaveText(/Completed|Cancelled/, { timeout: 15_000 });
  if ((await job.status.textContent()) === 'Cancelled') {
    await expect(page.getByTestId('job-cancelled')).toBeVisible();
    await expect(job.error).toHaveCount(0);
    // The last event is a neutral training_cancelled here; on the wire it stays the training_failed every client
    // knows, marked cancelled (docs/contract.md §3.5).
    await expect(page.getByTestId('job-event-type').filter({ hasText: 'training_cancelled' })).toHaveCount(1);
    await expect(page.getByTestId('job-event-type').filter({ hasText: 'training_failed' })).toHaveCount(0);
    // The newest event (a page of events ends wherever its limit does).
    const events = await request.get(`/v1/preview/training-jobs/${jobId}/events?newest_first=true&limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect((await events.json()).data[0]).toMatchObject({
      type: 'training_failed',
      data: { error_message: 'cancelled', cancelled: true },
    });
  }
});
