import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi, logGroups, trajectoryGroup } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';
import { ModelsPage } from '../pages/models-page';

test('a model created in the dialog opens its page and is listed', async ({ page }) => {
  await signUpViaApi(page.request, newUser());
  const models = new ModelsPage(page);
  await models.goto();
  const name = `ui-${uniqueId()}`;
  await models.createModel('dialog-project', name);

  const model = new ModelPage(page);
  await expect(page).toHaveURL(/\/models\/[0-9a-f-]{36}$/);
  await expect(model.name).toHaveText(name);
  // A new model starts at step 0 (the base weights) or with no checkpoint at all, depending on the server.
  await expect(model.latestStep).toHaveText(/No checkpoints|Latest step 0/);
  await expect(model.inferenceNames).toContainText(`/dialog-project/${name}`);

  await page.getByRole('link', { name: 'Models', exact: true }).first().click();
  await expect(models.row(name)).toBeVisible();
  await models.row(name).getByTestId('model-link').click();
  await expect(model.name).toHaveText(name);
});

test('the base-model picker shows size, context, who trains and serves each model, and why one is unavailable', async ({
  page,
}) => {
  await signUpViaApi(page.request, newUser());
  const models = new ModelsPage(page);
  await models.goto();
  await models.newModel.click();
  const options = models.createDialog.getByTestId('create-model-base-option');
  const tiny = options.filter({ hasText: 'tuneboard/tiny-random' });
  await expect(tiny).toHaveText(/params · 256 ctx · trains: built-in trainer · serves: built-in engine/);
  await expect(tiny).toBeEnabled();
  // The default file lists vLLM-served models; this server has no vLLM, so they are greyed out with the reason.
  const upstream = options.filter({ hasText: 'meta-llama/Llama-3.1-8B-Instruct' });
  await expect(upstream).toHaveText(/serves: vLLM — unavailable: no vLLM server is configured/);
  await expect(upstream).toBeDisabled();
});

test('the dialog explains invalid names next to the field and keeps the form', async ({ page }) => {
  await signUpViaApi(page.request, newUser());
  const models = new ModelsPage(page);
  await models.goto();
  await models.createModel('p', 'bad/name');
  const nameField = models.createDialog.getByLabel('Name', { exact: true });
  await expect(nameField).toBeFocused();
  await expect(nameField).toHaveAccessibleDescription(/must not contain/i);
  await expect(models.createDialog).toBeVisible();

  // New projects are slugs, like user and team handles.
  await models.submitCreateDialog('My Project', 'fine-name');
  const projectField = models.createDialog.getByLabel('Project');
  await expect(projectField).toBeFocused();
  await expect(projectField).toHaveAccessibleDescription(/lower-case letters/i);
});

test('models filter by project and base model, and the page has no serious a11y violations', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  await createModelViaApi(request, key, { project: 'alpha', name: 'a-one' });
  await createModelViaApi(request, key, { project: 'alpha', name: 'a-two', base_model: 'tuneboard/tiny-chat' });
  await createModelViaApi(request, key, { project: 'beta', name: 'b-one' });

  const models = new ModelsPage(page);
  await models.goto();
  await expect(models.rows).toHaveCount(3);
  await models.projectFilter.selectOption('alpha');
  await expect(models.rows).toHaveCount(2);
  await expect(page).toHaveURL(/project=alpha/);
  await models.baseModelFilter.selectOption('tuneboard/tiny-chat');
  await expect(models.rows).toHaveCount(1);
  await expect(models.row('a-two')).toBeVisible();

  await page.reload();
  await expect(models.rows).toHaveCount(1);
  await expectNoSeriousA11yViolations(page);
  await models.newModel.click();
  await expect(models.createDialog).toBeVisible();
  await expectNoSeriousA11yViolations(page);
});

test('each model shows its best checkpoint metric, and a dash without one', async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const scored = await createModelViaApi(request, key, { project: 'evals', name: 'scored' });
  await createModelViaApi(request, key, { project: 'evals', name: 'unscored' });
  // Rewards 0.65 and 0.75 on the latest checkpoint (step 0): val/reward 0.7.
  await logGroups(request, key, scored.id, 'val', [trajectoryGroup(0.7, 2)]);

  const models = new ModelsPage(page);
  await models.goto();
  await expect(models.table.getByRole('columnheader', { name: 'Best metric' })).toBeVisible();
  await expect(models.bestMetric('scored')).toContainText('0.7');
  await expect(models.bestMetric('scored')).toContainText('val/reward · step 0');
  await expect(models.bestMetric('unscored')).toHaveText('—');
  await expectNoSeriousA11yViolations(page);
});
