import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi } from '../fixtures/seed';
import {
  createTrainingClient,
  forwardBackwardBody,
  forwardBackwardResult,
  modelName,
  save,
  ScriptedTinkerWorker,
  tinkerCall,
  TINKER_BASES,
  trainStep,
  useTinkerBaseModels,
} from '../fixtures/tinker';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';

/*
 * Tinker training clients in the dashboard (docs/tinker.md): the Jobs page's list, the Workers page's held clients,
 * and a Tinker model's page. The SDK's calls go to /api/v1 as the SDK makes them; a worker scripted over the worker
 * routes answers them, so every state is there on cue.
 */

test.beforeAll(useTinkerBaseModels);

const LOST =
  'could not load e2e/tinker-jobs: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 13.90 GiB already allocated); unload a training client (unload_model) or start the worker with --max-training-clients 1';

test('the Jobs page lists Tinker training clients, live ones first, follows them, and the Workers page shows who holds them', async ({
  page,
  request,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);

  // With none yet, a short note says how to point the SDK here.
  await page.goto('/jobs');
  const none = page.getByTestId('no-tinker-clients');
  await expect(none).toContainText('TINKER_API_KEY=tml-<your API key>');
  await expect(none).toContainText('TINKER_BASE_URL=http://localhost');
  await expect(none.getByRole('link', { name: 'API keys' })).toHaveAttribute('href', '/settings/api-keys');

  const worker = new ScriptedTinkerWorker(request, TINKER_BASES.jobs);
  // One the worker failed to load: failed, with a long server error.
  const failed = await createTrainingClient(request, key, TINKER_BASES.jobs, { rank: 16 });
  await worker.fail((await worker.takeCreateRequest(failed)).request_id, LOST, 'server');
  // One the worker holds: a step taken, the next forward_backward open.
  const live = await createTrainingClient(request, key, TINKER_BASES.jobs, { rank: 8, train_unembed: false });
  await worker.takeCreate(live);
  await trainStep(request, key, worker, live, 1, 6);
  await tinkerCall(request, key, 'forward_backward', forwardBackwardBody(live, 3));
  // One no connected worker can train: waiting, and why.
  const waiting = await createTrainingClient(request, key, TINKER_BASES.wait, { rank: 4 });
  const [liveName, waitingName, failedName] = await Promise.all(
    [live, waiting, failed].map((id) => modelName(request, key, id)),
  );

  await page.reload();
  const card = page.getByRole('region', { name: 'Tinker training clients' });
  const rows = card.getByTestId('tinker-client-row');
  await expect(rows).toHaveCount(3);
  await expect(card).toContainText('2 live');
  // Live ones first (most recent request first), the failed one last.
  await expect(rows.nth(2)).toHaveAttribute('data-status', 'failed');
  const row = (name: string) => rows.filter({ has: page.getByRole('link', { name, exact: true }) });

  const liveRow = row(liveName);
  await expect(liveRow.getByTestId('tinker-client-status')).toHaveText('Ready');
  await expect(liveRow.getByTestId('tinker-client-worker')).toHaveText(worker.id);
  await expect(liveRow.getByTestId('tinker-client-base')).toHaveText(TINKER_BASES.jobs);
  await expect(liveRow).toContainText('rank 8');
  await expect(liveRow).toContainText('attn · mlp');
  await expect(liveRow.getByTestId('tinker-client-steps')).toHaveText('1');
  await expect(liveRow.getByTestId('tinker-client-open')).toHaveText('1 queued');
  await expect(liveRow).toContainText('0.25.0');

  const waitingRow = row(waitingName);
  await expect(waitingRow.getByTestId('tinker-client-status')).toHaveText('Waiting for a worker');
  await expect(waitingRow.getByTestId('tinker-client-note')).toHaveText(
    /no connected Python worker can train e2e\/tinker-wait/,
  );

  // A failure's error with its category; a long one is clamped until asked for.
  const failedRow = row(failedName);
  await expect(failedRow.getByTestId('tinker-client-status')).toHaveText('Failed');
  await expect(failedRow.getByTestId('tinker-error-category')).toHaveText('server error:');
  await expect(failedRow.getByTestId('tinker-error')).toContainText('CUDA out of memory');
  const toggle = failedRow.getByTestId('tinker-error-toggle');
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await expectNoSeriousA11yViolations(page, 'the Jobs page with Tinker training clients');

  // Live: the worker answers the open request and a step follows; the row moves without a reload.
  await worker.answer((await worker.next(live, 'forward_backward')).request_id, forwardBackwardResult(5));
  await tinkerCall(request, key, 'optim_step', { model_id: live, seq_id: 4, adam_params: {} });
  await worker.answer((await worker.next(live, 'optim_step')).request_id, {
    metrics: { 'optim/grad_norm': 1, 'optim/learning_rate': 1e-4, 'optim/step': 2 },
    stats: { grad_norm: 1, learning_rate: 1e-4, seconds: 0.01 },
  });
  await expect(liveRow.getByTestId('tinker-client-steps')).toHaveText('2', { timeout: 15_000 });
  await expect(liveRow.getByTestId('tinker-client-open')).toHaveText('none');

  // On a phone each client is a card, nothing cut off at the side.
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await liveRow.evaluate((el) => getComputedStyle(el).display)).toBe('block');
  const box = (await failedRow.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 800 });

  // The Workers page: the worker's kinds, the training client it holds, linked to its model.
  await page.goto('/workers');
  const workerRow = page.getByTestId('training-worker-row').filter({ hasText: worker.id });
  await expect(workerRow.getByTestId('worker-kinds')).toHaveText('(RL, SFT, Tinker)');
  await expect(workerRow.getByTestId('worker-tinker-count')).toHaveText('1 training client');
  await expect(workerRow.getByTestId('worker-status')).toHaveText(/busy with Tinker training clients/);
  const held = workerRow.getByRole('link', { name: liveName });
  await expect(held).toHaveAttribute('href', `/models/${live}`);
  await expectNoSeriousA11yViolations(page, 'the Workers page with a worker holding a training client');
  await held.click();
  await expect(page).toHaveURL(new RegExp(`/models/${live}$`));
  await expect(page.getByTestId('tinker-client-card')).toBeVisible();
});

test('a Tinker model’s page: its training client, requests with their errors, saved weights, and a curve by optim step', async ({
  page,
  request,
  context,
}) => {
  test.slow();
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const worker = new ScriptedTinkerWorker(request, TINKER_BASES.model);
  const id = await createTrainingClient(request, key, TINKER_BASES.model, { rank: 8 });
  await worker.takeCreate(id);
  // Three steps whose loss per token falls (3 tokens a step): 3, 2, 1.
  await trainStep(request, key, worker, id, 1, 9);
  await trainStep(request, key, worker, id, 3, 6);
  await trainStep(request, key, worker, id, 5, 3);
  const samplerPath = await save(request, key, worker, id, 7, 'sampler', 'step-3');
  await save(request, key, worker, id, 8, 'state', 'halfway', 7 * 86_400);
  // A request the worker refused (the user's mistake), then one left open.
  await tinkerCall(request, key, 'forward_backward', forwardBackwardBody(id, 9, [1, 2, 200_000]));
  await worker.fail(
    (await worker.next(id, 'forward_backward')).request_id,
    'datum 0: token 200000 at position 2 is outside the vocabulary of e2e/tinker-model (151669 tokens)',
    'user',
  );
  await tinkerCall(request, key, 'forward_backward', forwardBackwardBody(id, 10));

  await page.goto(`/models/${id}`);
  await expect(page.getByTestId('model-tinker-badge')).toHaveText('Tinker training client');
  const card = page.getByTestId('tinker-client-card');
  await expect(card.getByTestId('tinker-client-status')).toHaveText('Ready');
  await expect(card.getByTestId('tinker-client-worker')).toHaveText(worker.id);
  await expect(card.getByTestId('tinker-client-lora')).toContainText('rank 8 · α 32');
  await expect(card.getByTestId('tinker-client-lora')).toContainText('trains attn, mlp, unembed');
  await expect(card.getByTestId('tinker-client-steps')).toHaveText('3');
  await expect(card.getByTestId('tinker-client-open')).toHaveText('1 queued');

  // The open request on top; the failed one tinted, with its category and message.
  const requests = card.getByTestId('tinker-request-row');
  await expect(requests.first()).toHaveAttribute('data-status', 'queued');
  await expect(requests.first()).toContainText('forward_backward');
  const failedRequest = card.locator('[data-testid="tinker-request-row"][data-status="failed"]');
  await expect(failedRequest).toHaveCount(1);
  await expect(failedRequest.getByTestId('tinker-error-category')).toHaveText('user error:');
  await expect(failedRequest.getByTestId('tinker-request-error')).toContainText('outside the vocabulary');

  // Saved weights: sampler weights first, linked to their checkpoint; a state with its expiry.
  const saved = card.getByTestId('tinker-saved-row');
  await expect(saved).toHaveCount(2);
  await expect(saved.first()).toHaveAttribute('data-kind', 'sampler');
  await expect(saved.first().getByTestId('tinker-saved-path')).toHaveText(samplerPath);
  await expect(saved.nth(1)).toContainText('in 7 days');
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await saved.first().getByTestId('tinker-saved-copy').click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(samplerPath);
  await expect(saved.first().getByRole('link', { name: 'Open step 1 in the playground' })).toHaveAttribute(
    'href',
    /\/playground\?model=.*%3Astep1$/,
  );

  // The run is read from the loss of each optim step; the training client takes the job tile's place.
  await expect(page.getByTestId('run-verdict')).toHaveText('Improving: mean train loss');
  await expect(page.getByTestId('summary-tinker')).toContainText('3 optim steps');
  const curve = page.getByTestId('training-curve');
  await expect(curve).toContainText('All 3 optim steps of the Tinker training client');
  await expect(curve.getByRole('button', { name: 'Checkpoint step 1' }).first()).toBeVisible();
  // The checkpoints' copies of the step before each save are not charted again; no job list or prompt without jobs.
  await expect(page.getByRole('heading', { name: 'Metrics', exact: true })).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Training jobs' })).toHaveCount(0);
  await expectNoSeriousA11yViolations(page, 'a Tinker model page');

  // The sampler save's step link goes to its checkpoint's row.
  await saved.first().getByTestId('tinker-saved-step').click();
  await expect(page).toHaveURL(new RegExp(`/models/${id}#checkpoint-1$`));
  await expect(page.locator('#checkpoint-1')).toBeInViewport();

  // Live: the worker runs the open request; the card follows without a reload.
  await worker.answer((await worker.next(id, 'forward_backward')).request_id, forwardBackwardResult(2));
  await expect(card.getByTestId('tinker-client-open')).toHaveText('none', { timeout: 15_000 });
  await expect(requests.first()).toHaveAttribute('data-status', 'done');

  // On a phone the card's tables are cards, within the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const row of [requests.first(), saved.first()]) {
    const box = (await row.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
  }

  // Any other model has no such card (the route's 404 is a null, not an error).
  const plain = await createModelViaApi(request, key, { project: 'tinker', name: `plain-${uniqueId()}` });
  await page.goto(`/models/${plain.id}`);
  await expect(page.getByTestId('model-name')).toHaveText(plain.name);
  await expect(page.getByTestId('tinker-client-card')).toHaveCount(0);
  await expect(page.getByTestId('model-tinker-badge')).toHaveCount(0);
});
