import { modelSchema } from '@/lib/schemas/models';
import { sessionSchema } from '@/lib/schemas/accounts';
import { expect, test } from '../fixtures/test';
import { newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ApiKeysPage } from '../pages/api-keys-page';
import { AppShell } from '../pages/app-shell';
import { ModelsPage } from '../pages/models-page';
import { SignInPage } from '../pages/sign-in-page';
import { SignUpPage } from '../pages/sign-up-page';
import { TeamsPage } from '../pages/teams-page';

test('sign up, create a team and an API key, then use the key', async ({ page, request }) => {
  const user = newUser();
  const team = `team-${uniqueId()}`;
  const shell = new AppShell(page);
  const models = new ModelsPage(page);

  const signUp = new SignUpPage(page);
  await signUp.goto();
  await signUp.signUp(user);
  await expect(page).toHaveURL(/\/models$/);
  await expect(models.heading).toBeVisible();
  await expect(shell.userEmail).toHaveText(user.email);
  await expect(models.emptyState).toContainText(`"entity": "${user.username}"`);

  const teams = new TeamsPage(page);
  await shell.navigate('Settings');
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Teams' }).click();
  await teams.createTeam(team);
  await expect(teams.card(team)).toContainText('owner');
  await expect(teams.members(team)).toContainText([user.email]);
  // The shell is server-rendered: the new team reaches its entity list through a refresh.
  await expect(shell.entitySwitcher.locator('option', { hasText: team })).toHaveCount(1);

  const keys = new ApiKeysPage(page);
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'API keys' }).click();
  const key = await keys.createKey('e2e script', '30');
  expect(key).toMatch(/^tb_[A-Za-z0-9_-]{20,}$/);
  await expect(keys.newKeyBox).toContainText('won’t be able to see it again');
  await expect(keys.row('e2e script')).toContainText('Active');
  await expect(keys.row('e2e script')).toContainText(key.slice(0, 9));

  const auth = { Authorization: `Bearer ${key}` };
  const sessionRes = await request.get('/v1/auth/session', { headers: auth });
  expect(sessionRes.status()).toBe(200);
  const session = sessionSchema.parse(await sessionRes.json());
  expect(session.user.email).toBe(user.email);
  expect(session.default_entity).toBe(user.username);
  expect(session.entities.map((e) => e.name).sort()).toEqual([team, user.username].sort());

  for (const [entity, name] of [
    [user.username, 'first-model'],
    [team, 'team-model'],
  ]) {
    const res = await request.post('/v1/preview/models', {
      headers: auth,
      data: { entity, project: 'e2e', name, base_model: 'tuneboard/tiny-random' },
    });
    expect(res.status(), await res.text()).toBe(200);
    expect(modelSchema.parse(await res.json())).toMatchObject({ entity, project: 'e2e', name });
  }

  await shell.navigate('Models');
  await expect(models.row('first-model')).toContainText('tuneboard/tiny-random');
  await expect(models.row('first-model')).toContainText(`${user.username}/e2e/first-model`);
  await expect(models.rows).toHaveCount(1);

  await shell.switchEntity(team);
  await expect(page).toHaveURL(new RegExp(`[?&]entity=${team}`));
  await expect(models.row('team-model')).toBeVisible();
  await expect(models.rows).toHaveCount(1);
});

test('a wrong password is refused with a message, the right one signs in', async ({ page, request }) => {
  const user = await signUpViaApi(request);
  const signIn = new SignInPage(page);
  await signIn.goto();

  await signIn.signIn(user.email, 'not the password');
  await expect(signIn.error).toHaveText('Invalid email or password');
  await expect(page).toHaveURL(/\/sign-in$/);

  await signIn.signIn(user.email, user.password);
  await expect(page).toHaveURL(/\/models$/);
  await expect(new AppShell(page).userEmail).toHaveText(user.email);
});

test('fields are checked before sending and the first bad one gets focus', async ({ page }) => {
  const signUp = new SignUpPage(page);
  await signUp.goto();
  await signUp.email.fill('not-an-email');
  await signUp.password.fill('short');
  await signUp.submit.click();

  await expect(signUp.email).toHaveAttribute('aria-invalid', 'true');
  await expect(signUp.email).toBeFocused();
  await expect(signUp.email).toHaveAccessibleDescription(/must be an email address/i);
  await expect(signUp.password).toHaveAccessibleDescription(/at least 8 characters/i);
  await expect(page).toHaveURL(/\/sign-up$/);
});

test('an existing email is reported with a way to sign in', async ({ page, request }) => {
  const user = await signUpViaApi(request);
  const signUp = new SignUpPage(page);
  await signUp.goto();
  await signUp.signUp({ ...user, username: `other-${uniqueId()}` });
  await expect(signUp.error).toContainText('already exists');
  await signUp.error.getByRole('link', { name: 'Sign in instead' }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
});

test('a signed-out visit goes through sign-in and back to the page asked for', async ({ page, request }) => {
  const user = await signUpViaApi(request);
  await page.goto('/settings/teams');
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fsettings%2Fteams$/);

  await new SignInPage(page).signIn(user.email, user.password);
  await expect(page).toHaveURL(/\/settings\/teams$/);
  await expect(page.getByRole('heading', { name: 'Create a team' })).toBeVisible();
});

test('signing out ends the session', async ({ page }) => {
  const user = newUser();
  await new SignUpPage(page).goto();
  await new SignUpPage(page).signUp(user);
  await expect(page).toHaveURL(/\/models$/);

  await new AppShell(page).signOut();
  await expect(page).toHaveURL(/\/sign-in$/);
  await page.goto('/settings/api-keys');
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fsettings%2Fapi-keys$/);
});
