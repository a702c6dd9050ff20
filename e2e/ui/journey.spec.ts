import type { Response } from '@playwright/test';
import { checkpointListSchema } from '@/lib/schemas/checkpoints';
import { trainingJobSchema } from '@/lib/schemas/training-jobs';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { sftLines } from '../fixtures/models';
import { expect, test } from '../fixtures/test';
import { newUser, uniqueId } from '../fixtures/users';
import { ApiKeysPage } from '../pages/api-keys-page';
import { AppShell } from '../pages/app-shell';
import { JobPage } from '../pages/job-page';
import { ModelPage } from '../pages/model-page';
import { ModelsPage } from '../pages/models-page';
import { PlaygroundPage } from '../pages/playground-page';
import { SftLaunchPage } from '../pages/sft-launch-page';
import { SignUpPage } from '../pages/sign-up-page';

/*
 * The whole journey of a person who has never seen Tuneboard: sign up, create an API key, create a model,
 * fine-tune it from the form, watch the job train, and chat with the result beside step 0. Every step goes
 * through the UI by following links and buttons, as that person would; the API is only used to check facts
 * (the key works, the job wrote a checkpoint) with the key the person created.
 */

// 6 examples in batches of 2: three gradient steps (a loss line, not a dot) in a few seconds of CPU.
const EXAMPLES = 6;
const BATCH_SIZE = 2;
const STEPS = EXAMPLES / BATCH_SIZE;

test('a new person signs up, fine-tunes a model from the form, watches it train and chats with the result', async ({
  page,
  request,
}) => {
  // Several axe runs, a training job and two streamed answers on a shared 2-core machine.
  test.setTimeout(180_000);
  const user = newUser();
  const project = 'first-project';
  const name = `journey-${uniqueId()}`;
  const shell = new AppShell(page);

  await test.step('sign up from the front door', async () => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/sign-in/);
    // "Create the first account" on a server with none yet (this spec run alone on a fresh database).
    await page.getByRole('link', { name: /^Create (an|the first) account$/ }).click();
    const signUp = new SignUpPage(page);
    await expect(signUp.form).toBeVisible();
    await expectNoSeriousA11yViolations(page, 'the sign-up form');
    await signUp.signUp(user);
    await expect(page).toHaveURL(/\/models$/);
    await expect(shell.userEmail).toHaveText(user.email);
  });

  const models = new ModelsPage(page);
  await test.step('the empty models page says what to do first', async () => {
    await expect(models.emptyState).toContainText(`No models in ${user.username} yet`);
    await expect(models.emptyStateCreate).toBeVisible();
    await expectNoSeriousA11yViolations(page, 'the empty models page');
  });

  const auth = { Authorization: '' };
  await test.step('create an API key, shown once, that works', async () => {
    await shell.navigate('Settings');
    await expect(page).toHaveURL(/\/settings\/api-keys$/);
    const keys = new ApiKeysPage(page);
    const key = await keys.createKey('my laptop');
    expect(key).toMatch(/^tb_[A-Za-z0-9_-]{20,}$/);
    await expect(keys.newKeyBox).toContainText('won’t be able to see it again');
    await expect(keys.row('my laptop')).toContainText('Active');
    await expectNoSeriousA11yViolations(page, 'a new API key');
    auth.Authorization = `Bearer ${key}`;
    // `request` has no session cookie: the key alone authenticates it.
    const list = await request.get('/v1/preview/models', { headers: auth });
    expect(list.status(), await list.text()).toBe(200);
    // Shown once: after a reload the key is listed by its prefix only.
    await page.reload();
    await expect(keys.row('my laptop')).toContainText(key.slice(0, 9));
    await expect(keys.newKeyBox).toHaveCount(0);
    expect(await page.content()).not.toContain(key);
  });

  const modelPage = new ModelPage(page);
  let modelId = '';
  await test.step('create a model from the empty state', async () => {
    await shell.navigate('Models');
    await models.emptyStateCreate.click();
    await expect(models.createDialog).toBeVisible();
    await expectNoSeriousA11yViolations(page, 'the create-model dialog');
    // The default base model is the built-in chat model: a first-timer keeps it.
    await models.submitCreateDialog(project, name);
    await expect(page).toHaveURL(/\/models\/[0-9a-f-]{36}$/);
    modelId = new URL(page.url()).pathname.split('/').at(-1)!;
    await expect(modelPage.name).toHaveText(name);
    await expect(modelPage.latestStep).toHaveText('Latest step 0');
    await expect(modelPage.checkpointRows).toHaveCount(1);
    await expect(modelPage.fineTune).toHaveAccessibleName('Fine-tune');
    await expectNoSeriousA11yViolations(page, 'the new model');
  });

  const sft = new SftLaunchPage(page);
  await test.step('fine-tune it: the form opens with the model chosen, the dataset is checked, the job starts', async () => {
    await modelPage.fineTune.click();
    await expect(sft.heading).toBeVisible();
    await expect(sft.model).toHaveValue(modelId);
    await expect(sft.submit).toBeDisabled();
    await sft.chooseFile('arithmetic.jsonl', sftLines(EXAMPLES));
    await expect(sft.summary).toContainText(`${EXAMPLES} valid examples`);
    await expect(sft.examples.first()).toContainText('What is 0 + 1?');
    await expect(sft.datasetName).toHaveValue('arithmetic');
    await sft.batchSize.fill(String(BATCH_SIZE));
    // One pass keeps the events on one page; the form's own defaults are checked in sft-launch.spec.ts.
    await sft.epochs.fill('1');
    await expect(sft.submit).toBeEnabled();
    await expectNoSeriousA11yViolations(page, 'the SFT form, ready to launch');
    await sft.submit.click();
  });

  const job = new JobPage(page);
  let jobId = '';
  await test.step('the job page follows the job live until it completes, with its loss chart', async () => {
    await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/, { timeout: 30_000 });
    jobId = new URL(page.url()).pathname.split('/').at(-1)!;
    await expect(job.heading).toContainText('SFT training job');
    await expect(job.modelLink).toHaveText(name);
    // Live: nothing below reloads or navigates; events, status and charts arrive by themselves.
    let navigations = 0;
    const countNavigation = (frame: import('@playwright/test').Frame) => {
      if (frame === page.mainFrame()) navigations++;
    };
    page.on('framenavigated', countNavigation);
    const firstStatus = (await job.status.textContent()) ?? '';
    test.info().annotations.push({ type: 'job status on arrival', description: firstStatus });

    // Newest first: each new event arrives on top.
    await expect(job.eventRows.last()).toContainText('training_started', { timeout: 60_000 });
    await expect(job.status).toHaveText('Completed', { timeout: 90_000 });
    // training_ended on top, one gradient_step per batch, training_started at the bottom.
    await expect(job.eventRows).toHaveCount(STEPS + 2);
    await expect(job.eventRows.first()).toContainText('training_ended');
    await expect(job.eventRows.nth(1)).toContainText('gradient_step');
    await expect(job.eventRows.nth(1)).toContainText('loss=');
    await expect(job.eventRows.last()).toContainText('training_started');
    await expect(job.progress).toHaveAttribute('aria-valuetext', `${STEPS} / ${STEPS} steps`);
    await expect(job.newStep).toHaveText('1');
    await expect(job.chartLines('loss').first()).toBeAttached();
    await expect(job.cancelButton).toHaveCount(0);
    page.off('framenavigated', countNavigation);
    expect(navigations, 'the job page reloaded or navigated while the job ran').toBe(0);

    // The facts behind the page, read with the person's key.
    const res = await request.get(`/v1/preview/training-jobs/${jobId}`, { headers: auth });
    expect(res.status()).toBe(200);
    expect(trainingJobSchema.parse(await res.json())).toMatchObject({
      model_id: modelId,
      type: 'sft',
      status: 'COMPLETED',
      base_step: 0,
      step: 1,
      completed_steps: STEPS,
    });
    const checkpoints = await request.get(`/v1/preview/models/${modelId}/checkpoints?order=desc`, { headers: auth });
    expect(checkpoints.status()).toBe(200);
    expect(checkpointListSchema.parse(await checkpoints.json()).data.map((c) => c.step)).toEqual([1, 0]);

    // The finished job offers the next step: chatting with the new checkpoint.
    await expect(job.chatLink).toHaveAttribute(
      'href',
      `/playground?model=${encodeURIComponent(`${user.username}/${project}/${name}:step1`)}`,
    );
    await expectNoSeriousA11yViolations(page, 'the finished job');
  });

  const inferenceName = `${user.username}/${project}/${name}`;
  await test.step("the model's checkpoints list the new step", async () => {
    await job.modelLink.click();
    await expect(modelPage.name).toHaveText(name);
    await expect(modelPage.latestStep).toHaveText('Latest step 1');
    await expect(modelPage.checkpointRows).toHaveCount(2);
    await expect(modelPage.checkpointRows.first()).toHaveAttribute('data-step', '1');
    // Without a validation split no checkpoint is called best: train loss would crown an overfit model.
    await expect(modelPage.bestMetric).toHaveValue('');
    await expect(page.getByTestId('best-hint')).toBeVisible();
    // The row's actions, last in the row, are in view rather than scrolled off the side of the table.
    await modelPage.checkpoint(1).scrollIntoViewIfNeeded();
    await expect(modelPage.checkpoint(1).getByRole('button', { name: 'Delete step 1' })).toBeInViewport({ ratio: 1 });
    await expect(modelPage.jobRows).toHaveCount(1);
    await expect(modelPage.jobRows.first()).toContainText('Completed');
    await expectNoSeriousA11yViolations(page, 'the trained model');
  });

  const playground = new PlaygroundPage(page);
  await test.step('chat with the new checkpoint beside step 0', async () => {
    await modelPage.openInPlayground(1).click();
    await expect(playground.heading).toBeVisible();
    await expect(playground.panes).toHaveCount(1);
    await expect(playground.modelSelect(0)).toHaveAttribute('data-value', inferenceName);
    await expect(playground.checkpointSelect(0)).toHaveAttribute('data-value', '1');

    await playground.compare.click();
    await expect(playground.panes).toHaveCount(2);
    await playground.chooseModel(1, inferenceName);
    await playground.chooseCheckpoint(1, 0);
    await expect(page).toHaveURL(/\/playground\?/);
    await expect
      .poll(() => new URL(page.url()).searchParams.getAll('model'))
      .toEqual([`${inferenceName}:step1`, `${inferenceName}:step0`]);

    const streams: Response[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname === '/v1/chat/completions') streams.push(response);
    });
    await playground.maxTokens.fill('16');
    await playground.sendMessage('What is 3 + 1?');
    for (const pane of [0, 1]) {
      await expect(playground.pane(pane).getByTestId('user-message')).toContainText('What is 3 + 1?');
      await playground.waitForAnswerText(pane);
      await expect(playground.pane(pane).getByTestId('reply-usage')).toContainText('completion tokens');
      await expect(playground.pane(pane).getByTestId('pane-error')).toHaveCount(0);
    }
    await expect(playground.send).toBeVisible();

    // Both answers were streamed (server-sent events), one request per checkpoint.
    expect(streams).toHaveLength(2);
    const sent = streams.map((r) => r.request().postDataJSON() as { model: string; stream: boolean });
    expect(sent.map((b) => b.model).sort()).toEqual([`${inferenceName}:step0`, `${inferenceName}:step1`]);
    for (const [i, response] of streams.entries()) {
      expect(sent[i].stream).toBe(true);
      expect(response.status()).toBe(200);
      expect(response.headers()['content-type']).toContain('text/event-stream');
    }
    await expectNoSeriousA11yViolations(page, 'the comparison of step 1 with step 0');
  });
});
