import { expect, test } from '../fixtures/test';
import { expectNoSeriousA11yViolations } from '../fixtures/a11y';
import { createModelViaApi } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { AppShell } from '../pages/app-shell';
import { ModelPage } from '../pages/model-page';

test('Ctrl+K opens the quick switcher: find a model by name and open it with the keyboard', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const name = `switch-${uniqueId()}`;
  await createModelViaApi(request, key, { project: 'quick', name });
  await createModelViaApi(request, key, { project: 'quick', name: `other-${uniqueId()}` });

  await page.goto('/settings/api-keys');
  const shell = new AppShell(page);
  await shell.openPalette();
  await expect(shell.paletteInput).toBeFocused();
  await expect(shell.paletteOption('Playground')).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'the quick switcher');

  await shell.paletteInput.fill(name.slice(0, 12));
  await expect(shell.paletteOptions.first()).toContainText(name);
  await expect(shell.paletteOptions.first()).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Enter');
  await expect(new ModelPage(page).name).toHaveText(name);
  await expect(shell.palette).toBeHidden();

  // Projects of the selected entity lead to the filtered model list; Escape closes without moving.
  await shell.openPalette();
  await shell.paletteInput.fill('quick');
  await shell.paletteOption('2 models').click();
  await expect(page).toHaveURL(/\/models\?project=quick$/);
  await shell.openPalette();
  await page.keyboard.press('Escape');
  await expect(shell.palette).toBeHidden();
  await expect(page).toHaveURL(/\/models\?project=quick$/);
});

test('the quick switcher puts a model named exactly as typed above pages, one row selected', async ({
  page,
  request,
}) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  // "play" is also the start of the Playground page's name, which used to rank first.
  await createModelViaApi(request, key, { project: 'quick', name: 'play' });

  await page.goto('/models');
  const shell = new AppShell(page);
  await shell.openPalette();
  await shell.paletteInput.fill('play');
  await expect(shell.paletteOptions.first()).toContainText('quick');
  await expect(shell.paletteOption('Playground')).toBeVisible();
  await expect(shell.palette.locator('[aria-selected="true"]')).toHaveCount(1);
  await page.keyboard.press('Enter');
  await expect(new ModelPage(page).name).toHaveText('play');
});

test('the quick switcher moves between entities and says when nothing matches', async ({ page, baseURL }) => {
  await signUpViaApi(page.request, newUser());
  const team = `team-${uniqueId().slice(-6)}`;
  // A cookie-authenticated write needs the dashboard's Origin.
  const created = await page.request.post('/v1/teams', { headers: { Origin: baseURL! }, data: { name: team } });
  expect(created.status()).toBe(201);
  await page.goto('/models');
  const shell = new AppShell(page);
  await shell.sidebar.getByTestId('open-command-palette').click();
  await shell.paletteInput.fill(team);
  await shell.paletteInput.press('ArrowDown');
  await shell.paletteInput.press('ArrowUp');
  await expect(shell.paletteOption('Team')).toHaveAttribute('aria-selected', 'true');
  await shell.paletteInput.press('Enter');
  await expect(page).toHaveURL(new RegExp(`entity=${team}`));
  await expect(shell.entitySwitcher).toHaveValue(team);

  await shell.openPalette();
  await shell.paletteInput.fill('zzzz-nothing');
  await expect(shell.palette.getByRole('status')).toContainText('Nothing matches');
});

test('? lists the shortcuts, g then a letter navigates, and neither fires while typing', async ({ page }) => {
  await signUpViaApi(page.request, newUser());
  await page.goto('/models');
  const shell = new AppShell(page);
  await shell.openShortcuts();
  await expect(shell.shortcutsDialog).toContainText('Quick switcher');
  await expect(shell.shortcutsDialog).toContainText('Playground');
  await expectNoSeriousA11yViolations(page, 'the shortcuts dialog');
  await page.keyboard.press('Escape');
  await expect(shell.shortcutsDialog).toBeHidden();

  await page.keyboard.press('g');
  await page.keyboard.press('p');
  await expect(page).toHaveURL(/\/playground(\?|$)/);

  // In a text field the same keys are text.
  await page.getByLabel('System prompt').fill('');
  await page.getByLabel('System prompt').pressSequentially('g m ?');
  await expect(page).toHaveURL(/\/playground(\?|$)/);
  await expect(shell.shortcutsDialog).toBeHidden();
  await expect(page.getByLabel('System prompt')).toHaveValue('g m ?');
});

test('on a phone, Escape closes the menu and gives focus back to its button', async ({ page }) => {
  await signUpViaApi(page.request, newUser());
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/models');
  const open = page.getByRole('button', { name: 'Open menu' });
  await expect(async () => {
    await open.click();
    await expect(page.locator('#mobile-menu')).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 15_000 });
  await page.keyboard.press('Escape');
  await expect(page.locator('#mobile-menu')).toBeHidden();
  await expect(page.getByRole('button', { name: 'Open menu' })).toBeFocused();
});
