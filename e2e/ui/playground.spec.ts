import path from 'node:path';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi } from '../fixtures/models';
import { expect, test } from '../fixtures/test';
import {
  createModelViaApi as createModelViaSeed,
  createRlJob,
  logGroups,
  trajectoryGroup,
  waitForJob,
} from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { PlaygroundPage } from '../pages/playground-page';

const MODEL = 'tuneboard/tiny-random';

// Each test streams several completions from the CPU engine and runs axe more than once.
test.describe.configure({ timeout: 60_000 });

test.beforeEach(async ({ page }) => {
  await signUpViaApi(page.request);
});

test('a message streams an answer that can be read as tokens with their alternatives', async ({ page }) => {
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await expect(playground.modelSelect(0)).toHaveAttribute('data-value', MODEL);
  await playground.systemPrompt.fill('You are terse.');
  await playground.maxTokens.fill('24');
  await playground.sendMessage('Hello there');

  await expect(playground.pane(0).getByTestId('user-message')).toContainText('Hello there');
  await playground.waitForAnswerText(0);
  await expect(playground.send).toBeVisible();
  await expect(playground.pane(0).getByTestId('reply-usage')).toContainText('completion tokens');
  await expectNoSeriousA11yViolations(page, 'the playground with an answer');

  // A second turn carries the conversation.
  await playground.sendMessage('And again');
  await expect(playground.pane(0).getByTestId('assistant-message')).toHaveCount(2);
  await expect(playground.send).toBeVisible();

  await playground.viewToggle.getByText('Tokens').click();
  const token = playground.pane(0).getByTestId('token').first();
  await token.focus();
  const tooltip = page.getByRole('tooltip');
  await expect(tooltip).toBeVisible();
  await expect(tooltip).toContainText('Alternative');
  await expect(token).toHaveAttribute('aria-describedby', (await tooltip.getAttribute('id'))!);
  await expectNoSeriousA11yViolations(page, 'the token view');
});

test('stop ends a streaming answer and keeps what arrived', async ({ page }) => {
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await playground.maxTokens.fill('200');
  // The built-in model is fast; a slow network makes the stream last long enough to stop it.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: 1500,
    uploadThroughput: -1,
  });
  await playground.sendMessage('Tell me a long story');
  await expect(playground.stop).toBeVisible();
  await playground.waitForAnswerText(0, 20_000);
  await playground.stop.click();
  await expect(playground.pane(0).getByText('Stopped')).toBeVisible();
  await expect(playground.send).toBeVisible();
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
});

test('two models answer the same message side by side, and the exported code carries the seed', async ({
  page,
  baseURL,
}) => {
  const name = `cmp-${uniqueId()}`;
  const model = await createModelViaApi(page.request, baseURL!, { project: 'playground', name });
  const entity = model.entity;
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await playground.compare.click();
  await expect(playground.panes).toHaveCount(2);
  await playground.chooseModel(1, `${entity}/playground/${name}`);
  await expect(playground.checkpointSelect(1)).toHaveAttribute('data-value', 'latest');
  await expect
    .poll(() => new URL(page.url()).searchParams.getAll('model'))
    .toEqual(['tuneboard/tiny-random', `${entity}/playground/${name}`]);

  await playground.seed.fill('4242');
  await playground.maxTokens.fill('16');
  await playground.sendMessage('Compare me');
  await playground.waitForAnswerText(0);
  await playground.waitForAnswerText(1);
  await expect(playground.send).toBeVisible();
  await expect(playground.pane(1).getByTestId('pane-error')).toHaveCount(0);
  await expectNoSeriousA11yViolations(page, 'a comparison');

  const curl = await playground.exportFor(1, 'curl');
  expect(curl).toContain('"seed": 4242');
  expect(curl).toContain(`"model": "${entity}/playground/${name}"`);
  expect(curl).toContain('"content": "Compare me"');
  const python = await playground.exportFor(1, 'Python');
  expect(python).toContain('seed=4242');
  expect(python).toContain('"return_tokens_as_token_ids": False');
  const ts = await playground.exportFor(1, 'TypeScript');
  expect(ts).toContain('seed: 4242');
  await expectNoSeriousA11yViolations(page, 'the export dialog');
  await page.keyboard.press('Escape');
  await expect(playground.exportDialog).toBeHidden();
});

test('a bad parameter is caught before sending and a server error is shown in its pane', async ({ page }) => {
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL, 'nobody/nothing/here');
  await playground.temperature.fill('5');
  await playground.sendMessage('Hi');
  await expect(playground.temperature).toBeFocused();
  await expect(playground.temperature).toHaveAccessibleDescription(/Must be at most 2/);
  await playground.temperature.fill('0.5');
  await playground.send.click();
  // The answer may be whitespace only (a random model); the usage line says it finished.
  await expect(playground.pane(0).getByTestId('reply-usage')).toBeVisible();
  await expect(playground.pane(1).getByTestId('pane-error')).toContainText('nobody/nothing/here');
});

test('Compare beside a checkpoint adds the same model at step 0, and every pane names its model in full', async ({
  page,
  request,
  baseURL,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  // Long enough that a 4-pane grid at 1280 px cut it off in a select.
  const name = `a-rather-long-model-name-${uniqueId()}`;
  const model = await createModelViaApi(page.request, baseURL!, { project: 'first-project', name });
  const full = `${model.entity}/first-project/${name}`;
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(job.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  const step = job.step!;

  await page.setViewportSize({ width: 1280, height: 900 });
  const playground = new PlaygroundPage(page);
  await playground.goto(`${full}:step${step}`);
  await expect(playground.paneModelName(0)).toHaveText(name);
  await expect(playground.paneModelStep(0)).toHaveText(`Step ${step}`);
  await expect(playground.paneModelScope(0)).toHaveText(`${model.entity}/first-project`);
  await expect(playground.pane(0).getByTestId('pane-model')).toHaveAttribute('title', `${full}:step${step}`);
  // Beside a checkpoint sampling is greedy, and says why, until the person picks a temperature.
  await expect(playground.temperature).toHaveValue('0');
  await expect(playground.temperature).toHaveAccessibleDescription(/Greedy while comparing checkpoints/);

  // The same model at step 0 (its base weights), not some other model.
  await playground.compare.click();
  await expect(playground.panes).toHaveCount(2);
  await expect(playground.modelSelect(1)).toHaveAttribute('data-value', full);
  await expect(playground.checkpointSelect(1)).toHaveAttribute('data-value', '0');
  await expect(playground.paneModelStep(1)).toHaveText('Step 0');
  // Every step shown: the next click falls back to another model. The URL holds every pane.
  await playground.compare.click();
  await playground.compare.click();
  await expect(playground.panes).toHaveCount(4);
  await expect(playground.modelSelect(2)).not.toHaveAttribute('data-value', full);
  await playground.temperature.fill('0.9');
  await expect(playground.temperature).toHaveAccessibleDescription(/0 is greedy/);
  const urlModels = () => new URL(page.url()).searchParams.getAll('model');
  await expect.poll(urlModels).toHaveLength(4);
  expect(urlModels().slice(0, 2)).toEqual([`${full}:step${step}`, `${full}:step0`]);

  // However many panes, at 1280 and 1440 px the model's own name is shown whole.
  for (const width of [1280, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    for (const pane of [0, 1]) {
      await expect(playground.paneModelName(pane)).toHaveText(name);
      await expect(playground.paneModelName(pane)).toBeVisible();
      expect(await playground.showsAllText(playground.paneModelName(pane)), `pane ${pane} at ${width} px`).toBe(true);
    }
  }
  await expectNoSeriousA11yViolations(page, 'four panes');

  // The model list is searchable by any part of the name, and its options wrap instead of cutting names.
  await playground.modelSelect(3).click();
  await playground.modelSelect(3).fill('first-proj');
  const options = page.getByTestId('model-option');
  await expect(options).toHaveCount(1);
  await expect(options.first()).toHaveAttribute('data-value', full);
  expect(await playground.showsAllText(options.first())).toBe(true);
  // (No axe run while it is open: Base UI hides the rest of the page from screen readers then, by design, and axe
  // reports that page's focusable elements as aria-hidden. Focus leaving the input closes the list.)
  await page.keyboard.press('Escape');
  await expect(options).toHaveCount(0);

  // A reload keeps the comparison.
  await page.reload();
  await expect(playground.panes).toHaveCount(4);
  await expect(playground.checkpointSelect(1)).toHaveAttribute('data-value', '0');
});

test("the checkpoint list is searchable, with each step's headline metric", async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const name = `ckpt-${uniqueId()}`;
  const seeded = await createModelViaSeed(request, key, { project: 'steps', name });
  // Rewards 0.65 and 0.75 on the latest checkpoint (step 0): val/reward 0.7.
  await logGroups(request, key, seeded.id, 'val', [trajectoryGroup(0.7, 2)]);
  const full = `${seeded.entity}/steps/${name}`;

  const playground = new PlaygroundPage(page);
  await playground.goto(full);
  const picker = playground.checkpointSelect(0);
  await expect(picker).toHaveAttribute('data-value', 'latest');
  await expect(picker).toHaveValue('Latest');
  await expect(picker).toHaveAccessibleName('Checkpoint of model');
  await expectNoSeriousA11yViolations(page, 'the checkpoint picker');

  await picker.click();
  const options = page.getByTestId('checkpoint-option');
  await expect(options).toHaveCount(2);
  await expect(options.nth(0)).toHaveText(/^Lateststep 0 · val\/reward 0\.7$/);
  await expect(options.nth(1)).toHaveText(/^Step 0val\/reward 0\.7$/);
  await picker.fill('no such step');
  await expect(page.getByTestId('checkpoint-options')).toContainText('No checkpoint matches');
  await page.keyboard.press('Escape');

  await playground.chooseCheckpoint(0, 0);
  await expect(picker).toHaveValue('Step 0');
  await expect(playground.paneModelStep(0)).toHaveText('Step 0');
  await expect.poll(() => new URL(page.url()).searchParams.getAll('model')).toEqual([`${full}:step0`]);
  await playground.chooseCheckpoint(0, 'latest');
  await expect.poll(() => new URL(page.url()).searchParams.getAll('model')).toEqual([full]);
});

test('Compare beside a base model still adds another model', async ({ page }) => {
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await playground.compare.click();
  await expect(playground.panes).toHaveCount(2);
  await expect(playground.modelSelect(1)).not.toHaveAttribute('data-value', MODEL);
  await expect(playground.paneModelStep(1)).toHaveText('Base model');
  // Base models sample as usual.
  await expect(playground.temperature).toHaveValue('0.7');
});

test('blind A/B between two checkpoints: names hidden until the vote, which is stored with the model', async ({
  page,
  request,
  baseURL,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const name = `blind-${uniqueId()}`;
  const model = await createModelViaApi(page.request, baseURL!, { project: 'ab', name });
  const full = `${model.entity}/ab/${name}`;
  const job = await waitForJob(request, key, await createRlJob(request, key, model.id));
  expect(job.status, 'the built-in runner completes RL jobs (a failure here means training is broken)').toBe(
    'COMPLETED',
  );
  const step = job.step!;
  // An evaluation logged on the new checkpoint: its val/reward heads the pane.
  await logGroups(request, key, model.id, 'val', [trajectoryGroup(0.5)]);

  const playground = new PlaygroundPage(page);
  await playground.goto(`${full}:step${step}`);
  await expect(playground.pane(0).getByTestId('pane-model-metrics')).toContainText('val/reward0.5');
  const blindToggle = page.getByTestId('blind-toggle');
  // One pane is nothing to compare; a base model beside a checkpoint is not two checkpoints.
  await expect(blindToggle).toBeDisabled();
  await playground.goto(`${full}:step${step}`, `${full}:step0`);
  await expect(blindToggle).toBeEnabled();
  await blindToggle.click();
  await expect(blindToggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('blind-label')).toHaveText(['Answer A', 'Answer B']);
  await expect(page.getByTestId('pane-model')).toHaveCount(0);
  await expect(page.getByTestId('model-select')).toHaveCount(0);
  await expect(playground.pane(0)).toHaveAccessibleName('Answer A');

  await playground.maxTokens.fill('8');
  await playground.sendMessage('Which colour is the sky?');
  const vote = page.getByTestId('blind-vote');
  await expect(vote.getByRole('button', { name: 'A is better' })).toBeEnabled({ timeout: 30_000 });
  await expectNoSeriousA11yViolations(page, 'a blind round waiting for the vote');
  await shoot(page, 'playground-blind');
  await vote.getByRole('button', { name: 'B is better' }).click();
  const reveal = page.getByTestId('blind-reveal');
  await expect(reveal).toContainText('You preferred B');
  await expect(reveal).toContainText(/A was step \d+, B was step \d+/);
  // Named after the vote: B's pane says which step it is, and it is the one the reveal names.
  const [, bStep] = /B was step (\d+)/.exec((await reveal.textContent()) ?? '')!;
  await expect(playground.pane(1).getByTestId('pane-model-step')).toHaveText(`Step ${bStep}`);
  await shoot(page, 'playground-blind-voted');

  const summary = await request.get(`/v1/preview/models/${model.id}/ab-votes`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  const low = Math.min(step, 0);
  const high = Math.max(step, 0);
  expect(await summary.json()).toEqual({
    data: [
      {
        low_step: low,
        high_step: high,
        votes: 1,
        low_wins: Number(bStep) === low ? 1 : 0,
        high_wins: Number(bStep) === high ? 1 : 0,
        ties: 0,
        both_bad: 0,
      },
    ],
  });
  // The model page tallies it.
  await page.goto(`/models/${model.id}`);
  await expect(page.getByTestId('ab-vote-row')).toContainText(`Step ${high} vs step ${low}`);
  await expect(page.getByTestId('ab-vote-row')).toContainText(`Step ${bStep}`);
  await page.getByTestId('ab-votes').scrollIntoViewIfNeeded();
  await shoot(page, 'model-ab-votes', page.getByTestId('ab-votes'));
});

/** Light and dark screenshots for review (test-results/screenshots), of the page or of one element. */
async function shoot(
  page: import('@playwright/test').Page,
  name: string,
  element?: import('@playwright/test').Locator,
) {
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    const file = path.resolve('test-results/screenshots', `${theme}-${name}.png`);
    if (element) await element.screenshot({ path: file, animations: 'disabled' });
    else await page.screenshot({ path: file, animations: 'disabled' });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

test('a saved prompt set runs every prompt on every model and is there again after a reload', async ({ page }) => {
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await playground.compare.click();
  await expect(playground.panes).toHaveCount(2);
  await playground.maxTokens.fill('6');
  const set = page.getByTestId('prompt-set');
  const prompts = set.getByLabel('Prompts');
  await set.getByRole('button', { name: 'Run on 2 models' }).click();
  await expect(prompts).toHaveAccessibleDescription('Write at least one prompt, one per line');
  await prompts.fill('Capital of France?\n\nWrite one word.\n');
  await set.getByLabel('Name').fill('smoke');
  await set.getByRole('button', { name: 'Save set' }).click();
  await set.getByRole('button', { name: 'Run on 2 models' }).click();
  const rows = set.getByTestId('prompt-set-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText('Capital of France?');
  await expect(rows.nth(1)).toContainText('Write one word.');
  await expect(set.getByTestId('prompt-set-answer')).toHaveCount(4);
  await expect(set.getByRole('button', { name: 'Run on 2 models' })).toBeEnabled({ timeout: 30_000 });
  for (const cell of await set.getByTestId('prompt-set-answer').all()) await expect(cell).not.toBeEmpty();
  await expectNoSeriousA11yViolations(page, 'a prompt set with its answers');
  await shoot(page, 'playground-prompt-set', set);

  await page.reload();
  const saved = page.getByTestId('prompt-set-saved');
  await expect(saved.locator('option')).toHaveText(['Open a saved set…', 'smoke (2)']);
  await saved.selectOption('smoke');
  await expect(page.getByTestId('prompt-set').getByLabel('Prompts')).toHaveValue('Capital of France?\nWrite one word.');
});
