import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/test';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from './fixtures/users';
import { ApiKeysPage } from './pages/api-keys-page';
import { AppShell } from './pages/app-shell';
import { SignInPage } from './pages/sign-in-page';
import { SignUpPage } from './pages/sign-up-page';

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
      await keys.createKey('ci-runner', '90');
      await shoot(page, theme, 'api-keys');
      await keys.row('ci-runner').getByRole('button', { name: /^Revoke/ }).click();
      await expect(keys.confirmDialog).toBeVisible();
      await shoot(page, theme, 'api-keys-revoke-dialog', false);
      await keys.confirmDialog.getByRole('button', { name: 'Cancel' }).click();

      await page.goto('/settings/teams');
      await shoot(page, theme, 'teams');
      await page.goto('/settings/profile');
      await shoot(page, theme, 'profile');
      await page.goto('/playground');
      await shoot(page, theme, 'playground');

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
