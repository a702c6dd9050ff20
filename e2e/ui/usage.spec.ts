import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { expect, test } from '../fixtures/test';
import { signUpViaApi } from '../fixtures/users';
import { PlaygroundPage } from '../pages/playground-page';
import { UsagePage } from '../pages/usage-page';

// Two streamed completions, three page loads and an axe run.
test.describe.configure({ timeout: 60_000 });

test('the usage tab shows the chat requests made from the playground', async ({ page }) => {
  await signUpViaApi(page.request);
  const usage = new UsagePage(page);
  await usage.goto();
  await expect(page.getByRole('heading', { name: /No chat requests/ })).toBeVisible();
  await expect(usage.totalRequests).toHaveText('0');

  const playground = new PlaygroundPage(page);
  await playground.goto('tuneboard/tiny-random');
  await playground.maxTokens.fill('8');
  for (const text of ['one', 'two']) {
    await playground.sendMessage(text);
    await expect(playground.send).toBeVisible();
  }
  await expect(playground.pane(0).getByTestId('assistant-message')).toHaveCount(2);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Usage' }).click();
  await expect(page).toHaveURL(/\/settings\/usage/);
  await expect(usage.totalRequests).toHaveText('2');
  await expect(usage.rows).toHaveCount(1);
  await expect(usage.rows.first()).toContainText('tuneboard/tiny-random');
  await expect(usage.rows.first()).toContainText('inference');
  await expect(usage.chart.locator('.recharts-bar-rectangle').first()).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'the usage page');

  await page.getByTestId('usage-group').getByText('By project').click();
  await expect(page).toHaveURL(/group=project/);
  await page.getByTestId('usage-days').getByText('7 days').click();
  await expect(page).toHaveURL(/days=7/);
  await expect(usage.totalRequests).toHaveText('2');
});
