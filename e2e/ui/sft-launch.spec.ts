import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, sftLines } from '../fixtures/models';
import { expect, test } from '../fixtures/test';
import { signUpViaApi, uniqueId } from '../fixtures/users';
import { JobPage } from '../pages/job-page';
import { SftLaunchPage } from '../pages/sft-launch-page';

test.beforeEach(async ({ page }) => {
  // page.request shares the page's cookie jar: the browser is signed in from here on.
  await signUpViaApi(page.request);
});

test('a valid dataset is previewed, an invalid one is explained line by line and blocks the submit', async ({
  page,
  baseURL,
}) => {
  const model = await createModelViaApi(page.request, baseURL!, { project: 'sft-e2e', name: `m-${uniqueId()}` });
  const sft = new SftLaunchPage(page);
  await sft.goto(model.id);
  await expect(sft.heading).toBeVisible();
  await expect(sft.model).toHaveValue(model.id);
  await expect(sft.submit).toBeDisabled();

  await sft.chooseFile('greetings.jsonl', sftLines(5));
  await expect(sft.summary).toContainText('5 valid examples');
  await expect(sft.examples).toHaveCount(3);
  await expect(sft.examples.first()).toContainText('What is 0 + 1?');
  await expect(sft.errors).toHaveCount(0);
  await expect(sft.datasetName).toHaveValue('greetings');
  await expect(sft.submit).toBeEnabled();
  await expectNoSeriousA11yViolations(page, 'the SFT form with a preview');

  // Markup in a dataset is text, never HTML.
  const html = JSON.stringify({
    messages: [
      { role: 'user', content: '<img src=x onerror=alert(1)><b>bold</b>' },
      { role: 'assistant', content: 'ok' },
    ],
  });
  const bad = [
    sftLines(1),
    JSON.stringify({ messages: [{ role: 'user', content: 'no answer' }] }),
    html,
    '{not json',
    '',
  ].join('\n');
  await sft.dropFile('broken.jsonl', bad);
  await expect(sft.errors).toBeVisible();
  await expect(sft.errorLines).toHaveCount(2);
  await expect(sft.errorLines.nth(0)).toContainText('Line 2');
  await expect(sft.errorLines.nth(0)).toContainText('last message must have role "assistant"');
  await expect(sft.errorLines.nth(1)).toContainText('Line 4');
  await expect(sft.errorLines.nth(1)).toContainText('invalid JSON');
  await expect(sft.summary).toContainText('2 valid examples, 2 invalid lines');
  await expect(sft.examples.nth(1)).toContainText('<img src=x onerror=alert(1)><b>bold</b>');
  await expect(page.locator('[data-testid="dataset-preview"] img, [data-testid="dataset-preview"] b')).toHaveCount(0);
  await expect(sft.submit).toBeDisabled();
  await expectNoSeriousA11yViolations(page, 'the SFT form with errors');
});

test('launching uploads the dataset, creates the job and lands on the job page', async ({ page, baseURL }) => {
  const model = await createModelViaApi(page.request, baseURL!, { project: 'sft-e2e', name: `m-${uniqueId()}` });
  const sft = new SftLaunchPage(page);
  await sft.goto(model.id);
  await sft.chooseFile('train.jsonl', sftLines(4));
  // Defaults that teach a fact on the first try, and what they will cost.
  await expect(sft.batchSize).toHaveValue('4');
  await expect(sft.learningRate).toHaveValue('0.001');
  await expect(sft.epochs).toHaveValue('10');
  // The time comes from this server's own measured SFT jobs on the base model (issue 41), or is not guessed.
  await expect(sft.estimate).toContainText(
    /4 examples × 10 epochs ÷ batch 4 = 10 steps(, about .+ as \d+ earlier jobs? on this base model ran| \(no job on this base model has been timed yet)/,
  );
  await sft.epochs.fill('0');
  await expect(sft.epochs).toHaveAccessibleDescription(/whole number from 1/);
  await expect(sft.submit).toBeDisabled();
  await sft.epochs.fill('3');
  await sft.batchSize.fill('2');
  await expect(sft.estimate).toContainText('4 examples × 3 epochs ÷ batch 2 = 6 steps');
  await sft.learningRate.fill('1e-4');
  await sft.submit.click();

  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  const jobId = new URL(page.url()).pathname.split('/').at(-1)!;
  const job = await page.request.get(`/v1/preview/training-jobs/${jobId}`);
  expect(job.status()).toBe(200);
  const body = await job.json();
  expect(body).toMatchObject({ id: jobId, model_id: model.id, type: 'sft' });
  expect(body.config).toMatchObject({ batch_size: 2, learning_rate: 1e-4, epochs: 3 });

  const datasets = await (await page.request.get('/v1/preview/datasets')).json();
  expect(datasets.data[0]).toMatchObject({ project: 'sft-e2e', name: 'train', num_examples: 4 });

  // Once a job on this base model has run, the form's estimate is measured: its pace, not a fixed rate.
  await expect
    .poll(async () => (await (await page.request.get(`/v1/preview/training-jobs/${jobId}`)).json()).status, {
      timeout: 60_000,
    })
    .toBe('COMPLETED');
  await sft.goto(model.id);
  await sft.chooseFile('train.jsonl', sftLines(4));
  await expect(sft.estimate).toContainText(/= 10 steps, about .+ as \d+ earlier jobs? on this base model ran/);
});

test('holding examples out and starting from the base model: the estimate, the job, and val loss on its chart', async ({
  page,
  baseURL,
}) => {
  test.slow();
  const model = await createModelViaApi(page.request, baseURL!, { project: 'sft-e2e', name: `m-${uniqueId()}` });
  const sft = new SftLaunchPage(page);
  // Each checkpoint row of the model page links to the form, starting from that step.
  await page.goto(`/models/${model.id}`);
  await page.getByRole('link', { name: 'Fine-tune from step 0' }).click();
  await expect(sft.heading).toBeVisible();
  await expect(sft.model).toHaveValue(model.id);
  await expect(sft.startFrom).toHaveValue('0');
  await expect(sft.startFrom).toHaveAccessibleDescription(/Goes on from step 0/);
  await sft.chooseFile('train.jsonl', sftLines(10));
  await expect(sft.holdOut).toHaveValue('0');
  await expect(sft.estimate).toContainText('10 examples × 10 epochs ÷ batch 4 = 30 steps');
  await sft.holdOut.selectOption({ label: '20 % of the examples' });
  await expect(sft.estimate).toContainText('8 examples (2 held out) × 10 epochs ÷ batch 4 = 20 steps');
  await sft.startFrom.selectOption('base');
  await expect(sft.startFrom).toHaveAccessibleDescription(/untrained tuneboard\//);
  await expectNoSeriousA11yViolations(page, 'the SFT form with a hold-out and a start');
  await sft.submit.click();

  await expect(page).toHaveURL(/\/jobs\/[0-9a-f-]{36}$/, { timeout: 20_000 });
  const jobId = new URL(page.url()).pathname.split('/').at(-1)!;
  const body = await (await page.request.get(`/v1/preview/training-jobs/${jobId}`)).json();
  expect(body.config).toMatchObject({ validation_split: 0.2, start_from: 'base', epochs: 10 });
  expect(body.base_step).toBeNull();
  // The built-in runner trains it: the loss chart draws the held-out examples' loss, one point per epoch, over it.
  const job = new JobPage(page);
  await expect(job.status).toHaveText('Completed', { timeout: 60_000 });
  await expect(page.getByTestId('job-base-step')).toHaveText('Base model');
  await expect(job.chart('loss').getByText('val', { exact: true })).toBeVisible();
  await expect(job.chartLines('loss')).toHaveCount(2);
  // A chart, or a number in the constants row when it never moved (a tiny model may get no held-out token right).
  await expect(page.getByText('val/token_accuracy').first()).toBeVisible();
});

test('a server error is shown and the form stays usable', async ({ page, baseURL }) => {
  const model = await createModelViaApi(page.request, baseURL!, { project: 'sft-e2e', name: `m-${uniqueId()}` });
  await page.route('**/v1/preview/sft-training-jobs', (route) =>
    route.fulfill({
      status: 422,
      json: {
        detail: [
          { loc: ['body', 'training_data_url'], msg: 'Value error, the dataset is not ready', type: 'value_error' },
        ],
      },
    }),
  );
  const sft = new SftLaunchPage(page);
  await sft.goto(model.id);
  await sft.chooseFile('train.jsonl', sftLines(2));
  await sft.submit.click();
  await expect(page.getByRole('alert').filter({ hasText: 'The job could not be started' })).toBeVisible();
  await expect(sft.serverError).toHaveText('The dataset is not ready');
  await expect(sft.submit).toBeEnabled();

  // A refused setting is shown at its input, which gets focus.
  await page.unroute('**/v1/preview/sft-training-jobs');
  await page.route('**/v1/preview/sft-training-jobs', (route) =>
    route.fulfill({
      status: 422,
      json: {
        detail: [{ loc: ['body', 'config', 'epochs'], msg: 'Value error, at most 3 here', type: 'value_error' }],
      },
    }),
  );
  await sft.submit.click();
  await expect(sft.epochs).toBeFocused();
  await expect(sft.epochs).toHaveAccessibleDescription(/At most 3 here/);
  await expect(sft.serverError).toHaveText('See the fields marked above.');
  await sft.epochs.fill('3');
  await expect(sft.epochs).not.toHaveAttribute('aria-invalid', 'true');
  await expect(sft.submit).toBeEnabled();
});

test('a learning rate the API would refuse is explained before anything is sent', async ({ page, baseURL }) => {
  const model = await createModelViaApi(page.request, baseURL!, { project: 'sft-e2e', name: `m-${uniqueId()}` });
  const sft = new SftLaunchPage(page);
  await sft.goto(model.id);
  await sft.chooseFile('train.jsonl', sftLines(2));
  await sft.learningRate.fill('5');
  await expect(sft.learningRate).toHaveAccessibleDescription(/positive number up to 1/);
  await expect(sft.submit).toBeDisabled();
  await sft.learningRate.fill('abc');
  await expect(sft.learningRate).toHaveAccessibleDescription(/positive number up to 1/);
  await expect(sft.estimate).toContainText('2 examples × 10 epochs');
  await sft.learningRate.fill('');
  await expect(sft.submit).toBeEnabled();
});

test('the navigation leads to the form, which asks for a model when there is none', async ({ page }) => {
  await page.goto('/models');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fine-tune' }).click();
  await expect(new SftLaunchPage(page).heading).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Create a model first' })).toBeVisible();
  // The way on: the Models page, whose empty state creates one.
  await page.getByRole('link', { name: 'Go to Models' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Models' })).toBeVisible();
  await expect(page.getByTestId('models-empty').getByRole('button', { name: 'Create a model' })).toBeVisible();
});
