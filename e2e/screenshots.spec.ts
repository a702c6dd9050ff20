import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/test';
import { createModelViaApi, createRlJob, logGroups, seedRun, trajectoryGroup, waitForJob } from './fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from './fixtures/users';
import { sftLines } from './fixtures/models';
import { ApiKeysPage } from './pages/api-keys-page';
import { AppShell } from './pages/app-shell';
import { SignInPage } from './pages/sign-in-page';
import { PlaygroundPage } from './pages/playground-page';
import { SftLaunchPage } from './pages/sft-launch-page';
import { SignUpPage } from './pages/sign-up-page';
import { TeamsPage } from './pages/teams-page';
import { UsagePage } from './pages/usage-page';

/*
 * Not a test of behaviour: every page the dashboard has, in both themes, written to
 * test-results/screenshots/ so that a person can look at them. It still fails on any page error.
 */
const OUT = path.join('test-results', 'screenshots');

async function shoot(page: Page, theme: string, name: string, fullPage = true) {
  // Relative times and spinners settle; web fonts are not used, so there is nothing else to wait for.
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: path.join(OUT, `${theme}-${name}.png`), fullPage, animations: 'disabled' });
}

for (const theme of ['light', 'dark'] as const) {
  test.describe(theme, () => {
    test.use({ colorScheme: theme, viewport: { width: 1280, height: 860 } });

    test(`every page in ${theme}`, async ({ page, request, baseURL }) => {
      test.setTimeout(120_000);
      const origin = { Origin: baseURL! };

      await page.goto('/sign-in');
      await expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark)/);
      await shoot(page, theme, 'sign-in');
      const colleague = await signUpViaApi(request);
      await new SignInPage(page).signIn(colleague.email, 'wrong password');
      await expect(new SignInPage(page).error).toBeVisible();
      await shoot(page, theme, 'sign-in-error');

      await page.goto('/sign-up');
      await shoot(page, theme, 'sign-up');
      await new SignUpPage(page).submit.click();
      await expect(new SignUpPage(page).email).toBeFocused();
      await shoot(page, theme, 'sign-up-errors');

      await page.goto('/this-page-does-not-exist');
      await shoot(page, theme, 'not-found', false);

      // Signed in from here on: page.request shares the page's cookies.
      const user = newUser();
      user.name = 'Ada Lovelace';
      await signUpViaApi(page.request, user);
      await page.goto('/models');
      await shoot(page, theme, 'models-empty');

      const team = `research-${uniqueId().slice(-4)}`;
      expect((await page.request.post('/v1/teams', { headers: origin, data: { name: team } })).status()).toBe(201);
      const added = await page.request.post(`/v1/teams/${team}/members`, {
        headers: origin,
        data: { email: colleague.email, role: 'admin' },
      });
      expect(added.status()).toBe(200);

      const key = await apiKeyFor(request, user);
      const bearer = { Authorization: `Bearer ${key}` };
      for (const [project, name] of [
        ['sentiment', 'sst2-lora'],
        ['sentiment', 'sst2-lora-r16'],
        ['support-bot', 'faq-assistant'],
        ['support-bot', 'faq-assistant-v2'],
        ['evals', 'tiny-baseline'],
      ]) {
        const res = await request.post('/v1/preview/models', {
          headers: bearer,
          data: { project, name, base_model: 'tuneboard/tiny-random' },
        });
        expect(res.status()).toBe(200);
      }
      await page.goto('/models');
      await shoot(page, theme, 'models');

      await page.getByRole('searchbox', { name: 'Search models by name' }).fill('nothing-like-this');
      await expect(page.getByText('No models match')).toBeVisible();
      await shoot(page, theme, 'models-no-results');

      const keys = new ApiKeysPage(page);
      await keys.goto();
      await keys.createKey('old laptop');
      await page.getByTestId('dismiss-new-api-key').click();
      await keys.revoke('old laptop');
      await expect(keys.row('old laptop')).toContainText('Revoked');
      await keys.create.click();
      await expect(keys.name).toBeFocused();
      await shoot(page, theme, 'api-keys-form-error', false);
      await keys.createKey('ci-runner', '90');
      await shoot(page, theme, 'api-keys');
      await keys
        .row('ci-runner')
        .getByRole('button', { name: /^Revoke/ })
        .click();
      await expect(keys.confirmDialog).toBeVisible();
      await shoot(page, theme, 'api-keys-revoke-dialog', false);
      await keys.confirmDialog.getByRole('button', { name: 'Cancel' }).click();

      await page.goto('/settings/teams');
      await shoot(page, theme, 'teams');
      const teams = new TeamsPage(page);
      await teams.teamName.fill('Not A Handle');
      await teams.create.click();
      await expect(teams.teamName).toBeFocused();
      await teams.addMember(team, 'nobody@example.test');
      await expect(teams.card(team).getByRole('alert')).toBeVisible();
      await shoot(page, theme, 'teams-errors');
      await page.goto('/settings/profile');
      await shoot(page, theme, 'profile');
      await page.goto('/playground');
      await shoot(page, theme, 'playground');

      // The playground mid-conversation: two models side by side, then the token view and the export dialog.
      const playground = new PlaygroundPage(page);
      await playground.goto('tuneboard/tiny-random');
      await playground.compare.click();
      await playground.chooseModel(1, `${user.username}/support-bot/faq-assistant`);
      await playground.systemPrompt.fill('You are a concise assistant.');
      await playground.seed.fill('7');
      await playground.maxTokens.fill('48');
      await playground.sendMessage('Write a haiku about gradient descent.');
      await expect(playground.send).toBeVisible();
      await shoot(page, theme, 'playground-compare');
      await playground.viewToggle.getByText('Tokens').click();
      await playground.pane(0).getByTestId('token').nth(2).focus();
      await expect(page.getByRole('tooltip')).toBeVisible();
      await shoot(page, theme, 'playground-tokens');
      await playground.exportFor(0, 'Python');
      await shoot(page, theme, 'playground-export', false);
      await page.keyboard.press('Escape');
      await page.getByLabel('Format', { exact: true }).selectOption('json_schema');
      await page.getByTestId('json-schema-editor').fill('{"type": "object",');
      await shoot(page, theme, 'playground-json-schema-error');

      // The SFT form: a valid file with its preview, then a broken one with its line-numbered errors.
      const sft = new SftLaunchPage(page);
      await sft.goto();
      await sft.chooseFile('support-faq.jsonl', sftLines(12));
      await expect(sft.preview).toBeVisible();
      await shoot(page, theme, 'sft-preview');
      await sft.holdOut.selectOption({ label: '20 % of the examples' });
      await sft.startFrom.selectOption('base');
      await expect(sft.estimate).toContainText('held out');
      await shoot(page, theme, 'sft-hold-out');
      await sft.learningRate.fill('5');
      await sft.epochs.fill('0');
      await expect(sft.epochs).toHaveAttribute('aria-invalid', 'true');
      await shoot(page, theme, 'sft-setting-errors');
      await sft.learningRate.fill('');
      await sft.epochs.fill('10');
      await sft.chooseFile(
        'broken.jsonl',
        [
          sftLines(2),
          '{"messages": []}',
          '{oops',
          JSON.stringify({ messages: [{ role: 'robot', content: 'x' }] }),
        ].join('\n'),
      );
      await expect(sft.errors).toBeVisible();
      await shoot(page, theme, 'sft-errors');

      await new UsagePage(page).goto();
      await expect(page.getByTestId('usage-chart')).toBeVisible();
      await page.waitForTimeout(300);
      await shoot(page, theme, 'usage');

      await page.goto('/workers');
      await expect(page.getByRole('heading', { level: 1, name: 'Training workers' })).toBeVisible();
      await page.waitForLoadState('networkidle');
      await shoot(page, theme, 'workers');

      // The Evals view of a user with no sets or runs yet (e2e/ui/evals.spec.ts shoots a completed run).
      await page.goto('/evals');
      await expect(page.getByText('No eval runs yet')).toBeVisible();
      await shoot(page, theme, 'evals-empty');

      await page.goto(`/models?entity=${team}`);
      await expect(new AppShell(page).entitySwitcher).toHaveValue(team);
      await shoot(page, theme, 'models-team-empty');

      await page.goto('/docs');
      await expect(page.getByTestId('api-operation').first().or(page.getByTestId('openapi-error'))).toBeVisible();
      const firstOperation = page.getByTestId('api-operation').first();
      if (await firstOperation.isVisible()) await firstOperation.locator('summary').click();
      await shoot(page, theme, 'docs');

      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto('/models');
      await shoot(page, theme, 'mobile-models', false);
      await page.getByRole('button', { name: 'Open menu' }).click();
      await shoot(page, theme, 'mobile-menu', false);
      await page.goto('/settings/api-keys');
      await shoot(page, theme, 'mobile-api-keys');
    });
  });
}

/*
 * The model, job and trajectory pages with a small seeded run. Jobs may or may not run on the server
 * that takes the screenshots; the pages are captured in whatever state they reach.
 */
for (const theme of ['light', 'dark'] as const) {
  test.describe(`${theme} model pages`, () => {
    test.use({ colorScheme: theme, viewport: { width: 1280, height: 860 } });

    test(`model, job and trajectory pages in ${theme}`, async ({ page, request }) => {
      test.setTimeout(240_000);
      const user = newUser();
      await signUpViaApi(page.request, user);
      const key = await apiKeyFor(request, user);
      const bearer = { Authorization: `Bearer ${key}` };
      const model = await createModelViaApi(request, key, { project: 'support-bot', name: 'faq-assistant' });
      await createModelViaApi(request, key, {
        project: 'evals',
        name: 'tiny-baseline',
        base_model: 'tuneboard/tiny-chat',
      });
      await seedRun(request, key, model.id, 5);

      const trainRes = await request.post('/v1/preview/training-jobs', {
        headers: bearer,
        data: {
          model_id: model.id,
          trajectory_groups: [trajectoryGroup(0.4, 14), trajectoryGroup(0.6, 14)],
          experimental_config: { allow_training_without_logprobs: true },
        },
      });
      expect(trainRes.status()).toBe(200);
      const trainJobId = ((await trainRes.json()) as { id: string }).id;
      await waitForJob(request, key, trainJobId, 90_000);
      // A job cancelled right away ends as FAILED with its reason: the failed-job view.
      const failedJobId = await createRlJob(request, key, model.id, [trajectoryGroup(0.5, 3)]);
      await request.post(`/v1/preview/training-jobs/${failedJobId}/cancel`, { headers: bearer });
      await waitForJob(request, key, failedJobId, 30_000);
      await logGroups(request, key, model.id, 'val', [trajectoryGroup(0.7, 2)]);

      await page.goto('/models');
      await shoot(page, theme, 'models-with-filters');
      await page.getByTestId('new-model').click();
      await expect(page.getByTestId('create-model-dialog')).toBeVisible();
      await shoot(page, theme, 'models-create-dialog', false);
      await page.getByTestId('create-model-submit').click();
      await expect(page.getByTestId('create-model-project')).toBeFocused();
      await shoot(page, theme, 'models-create-dialog-errors', false);
      await page.getByTestId('create-model-dialog').getByRole('button', { name: 'Cancel' }).click();

      // The playground's checkpoint picker, open: each step with its headline metric.
      const playground = new PlaygroundPage(page);
      await playground.goto(`${user.username}/support-bot/faq-assistant`);
      await playground.checkpointSelect(0).click();
      await expect(page.getByTestId('checkpoint-option').first()).toBeVisible();
      await shoot(page, theme, 'playground-checkpoint-picker', false);
      await page.keyboard.press('Escape');

      await page.goto(`/models/${model.id}`);
      await expect(page.getByTestId('metric-chart').first().locator('path.recharts-line-curve').first()).toBeAttached();
      await shoot(page, theme, 'model');
      await page.getByTestId('metric-chart').first().hover();
      await shoot(page, theme, 'model-chart-tooltip', false);
      await page.getByTestId('delete-model').click();
      await page.getByTestId('delete-model-confirm-name').fill('faq');
      await shoot(page, theme, 'model-delete-dialog', false);
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      await page.goto(`/models/${model.id}?tab=trajectories`);
      await expect(page.getByTestId('trajectory-group').first()).toBeVisible();
      await shoot(page, theme, 'model-trajectories');

      await page.goto(`/jobs/${trainJobId}`);
      await expect(page.getByTestId('job-status')).toBeVisible();
      await shoot(page, theme, 'job');
      await page.goto(`/jobs/${failedJobId}`);
      await expect(page.getByTestId('job-status')).toBeVisible();
      await shoot(page, theme, 'job-cancelled');
      await page.goto('/jobs');
      await expect(page.getByTestId('entity-job-row').first()).toBeVisible();
      await shoot(page, theme, 'jobs');

      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`/models/${model.id}`);
      await shoot(page, theme, 'mobile-model');
      // Tables become cards on a phone.
      await page.goto('/jobs');
      await expect(page.getByTestId('entity-job-row').first()).toBeVisible();
      await shoot(page, theme, 'mobile-jobs');
    });
  });
}
