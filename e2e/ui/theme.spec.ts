import { expect, test } from '../fixtures/test';

test.use({ colorScheme: 'dark' });

test('the theme follows the OS until the user picks one, which is remembered', async ({ page }) => {
  await page.goto('/sign-in');
  const html = page.locator('html');
  await expect(html).toHaveClass(/\bdark\b/);

  await page.getByRole('button', { name: 'Switch to light theme' }).click();
  await expect(html).not.toHaveClass(/\bdark\b/);
  expect(await page.evaluate(() => localStorage.getItem('tuneboard-theme'))).toBe('light');

  // Set before first paint by the inline script: the class is already right in the initial document.
  await page.reload();
  await expect(html).not.toHaveClass(/\bdark\b/);
  await expect(page.getByRole('button', { name: 'Switch to dark theme' })).toBeVisible();
});

test('a chosen theme can go back to following the system', async ({ page }) => {
  await page.goto('/sign-in');
  const html = page.locator('html');
  await page.getByRole('button', { name: 'Switch to light theme' }).click();
  await expect(html).not.toHaveClass(/\bdark\b/);
  await page.getByRole('button', { name: 'Follow the system theme' }).click();
  // The OS (this spec's colour scheme) is dark again, and nothing is stored.
  await expect(html).toHaveClass(/\bdark\b/);
  expect(await page.evaluate(() => localStorage.getItem('tuneboard-theme'))).toBeNull();
  await expect(page.getByRole('button', { name: 'Follow the system theme' })).toHaveCount(0);
});
