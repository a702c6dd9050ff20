import { expect, test } from '../fixtures/test';
import { newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ApiKeysPage } from '../pages/api-keys-page';
import { SignUpPage } from '../pages/sign-up-page';
import { TeamsPage } from '../pages/teams-page';

test.beforeEach(async ({ page }) => {
  await new SignUpPage(page).goto();
  await new SignUpPage(page).signUp(newUser());
  await expect(page).toHaveURL(/\/models$/);
});

test('a revoked key is refused by the API and shown as revoked', async ({ page, request }) => {
  const keys = new ApiKeysPage(page);
  await keys.goto();
  const key = await keys.createKey('to revoke');
  expect((await request.get('/v1/auth/session', { headers: { Authorization: `Bearer ${key}` } })).status()).toBe(200);

  await keys
    .row('to revoke')
    .getByRole('button', { name: /^Revoke/ })
    .click();
  await expect(keys.confirmDialog).toContainText('cannot be undone');
  await keys.confirmDialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(keys.confirmDialog).toBeHidden();
  await expect(keys.row('to revoke')).toContainText('Active');

  await keys.revoke('to revoke');
  await expect(keys.confirmDialog).toBeHidden();
  await expect(keys.row('to revoke')).toContainText('Revoked');
  await expect(keys.row('to revoke').getByRole('button', { name: /^Revoke/ })).toHaveCount(0);
  expect((await request.get('/v1/auth/session', { headers: { Authorization: `Bearer ${key}` } })).status()).toBe(401);
});

test('team members can be added by email and removed', async ({ page, request }) => {
  const colleague = await signUpViaApi(request);
  const team = `team-${uniqueId()}`;
  const teams = new TeamsPage(page);
  await teams.goto();
  await teams.createTeam(team);

  await teams.addMember(team, `nobody-${uniqueId()}@example.test`);
  await expect(teams.card(team).getByRole('alert')).toContainText('need to sign up first');

  await teams.addMember(team, colleague.email, 'admin');
  const row = teams.members(team).filter({ hasText: colleague.email });
  await expect(row).toContainText('admin');
  await expect(teams.members(team)).toHaveCount(2);

  await teams.removeMember(team, colleague.email);
  await expect(teams.members(team)).toHaveCount(1);
});

test('a team name that breaks the handle rules is explained next to the field', async ({ page }) => {
  const teams = new TeamsPage(page);
  await teams.goto();
  await teams.teamName.fill('Not A Handle');
  await teams.create.click();
  await expect(teams.teamName).toBeFocused();
  await expect(teams.teamName).toHaveAccessibleDescription(/Use lower-case letters/);
  await expect(teams.cards).toHaveCount(0);
});

test("the server's refusal lands on the field it names, anything else in the form's line", async ({ page }) => {
  const keys = new ApiKeysPage(page);
  await keys.goto();
  let answer: { status: number; json: unknown } = {
    status: 422,
    json: {
      detail: [{ loc: ['body', 'name'], msg: 'Value error, a key named so already exists', type: 'value_error' }],
    },
  };
  await page.route('**/v1/api-keys', (route) =>
    route.request().method() === 'POST' ? route.fulfill(answer) : route.fallback(),
  );
  await keys.name.fill('laptop');
  await keys.create.click();
  await expect(keys.name).toBeFocused();
  await expect(keys.name).toHaveAttribute('aria-invalid', 'true');
  await expect(keys.name).toHaveAccessibleDescription(/A key named so already exists/);
  await expect(keys.createForm.getByRole('alert')).toHaveCount(0);
  // Typing clears the field's error; a failure that is about no field is said for the whole form.
  await keys.name.fill('laptop 2');
  await expect(keys.name).not.toHaveAttribute('aria-invalid', 'true');
  answer = { status: 500, json: { detail: '' } };
  await keys.create.click();
  await expect(keys.createForm.getByRole('alert')).toHaveText('The server had a problem. Try again in a moment.');
  await expect(keys.create).toBeEnabled();
  await expect(keys.name).toHaveValue('laptop 2');
});
