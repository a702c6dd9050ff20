import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as keyRoute from '@/app/v1/api-keys/[key_id]/route';
import * as keysRoute from '@/app/v1/api-keys/route';
import * as sessionRoute from '@/app/v1/auth/session/route';
import * as signInRoute from '@/app/v1/auth/sign-in/route';
import * as signOutRoute from '@/app/v1/auth/sign-out/route';
import * as signUpRoute from '@/app/v1/auth/sign-up/route';
import * as tokenRoute from '@/app/v1/auth/token/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as modelsRoute from '@/app/v1/preview/models/route';
import * as memberRoute from '@/app/v1/teams/[team]/members/[user_id]/route';
import * as membersRoute from '@/app/v1/teams/[team]/members/route';
import * as teamsRoute from '@/app/v1/teams/route';
import { getDb } from '@/lib/db/client';
import { apiKeys } from '@/lib/db/schema';
import { principalChanged } from '@/lib/services/principal-cache';
import { apiKeySchema, createdApiKeySchema, sessionSchema, teamSchema } from '@/lib/schemas/accounts';
import { modelListSchema, modelSchema, modelSummarySchema } from '@/lib/schemas/models';
import { call, createModel, createUser, TEST_BASE_MODEL, uniqueName, type TestUser } from '../support/helpers';

const SAME_ORIGIN = { origin: 'http://localhost:3000', host: 'localhost:3000' };

function signUp(body: Record<string, unknown>) {
  return call(signUpRoute, 'POST', '/v1/auth/sign-up', { body });
}

function cookieOf(res: { headers: Headers }): string {
  return res.headers.get('set-cookie')!.split(';')[0];
}

async function session(auth: { key?: string; cookie?: string }) {
  return call(sessionRoute, 'GET', '/v1/auth/session', auth);
}

async function listKeys(user: TestUser) {
  const res = await call(keysRoute, 'GET', '/v1/api-keys', { key: user.key });
  expect(res.status).toBe(200);
  return res.body.data.map((k: unknown) => apiKeySchema.parse(k));
}

async function createKey(user: TestUser, body: Record<string, unknown> = { name: 'ci' }) {
  const res = await call(keysRoute, 'POST', '/v1/api-keys', { key: user.key, body });
  expect(res.status).toBe(201);
  return createdApiKeySchema.parse(res.body);
}

async function userId(user: TestUser): Promise<string> {
  return sessionSchema.parse((await session({ key: user.key })).body).user.id;
}

describe('sign-up, sign-in, session, sign-out', () => {
  it('signs up with 201 and an HttpOnly SameSite=Lax session cookie', async () => {
    const handle = uniqueName('signup-');
    const res = await signUp({
      email: `${handle}@Example.test`,
      password: 'long enough pw',
      username: handle,
      name: 'Ada',
    });
    expect(res.status).toBe(201);
    const body = sessionSchema.parse(res.body);
    expect(body.user).toMatchObject({ email: `${handle}@example.test`, name: 'Ada' });
    expect(body.default_entity).toBe(handle);
    expect(body.entities).toEqual([{ id: expect.any(String), name: handle, kind: 'user', role: 'owner' }]);

    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^tb_session=[^;]+;/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Secure');
    const secure = await call(signUpRoute, 'POST', '/v1/auth/sign-up', {
      body: { email: `${uniqueName('s-')}@example.test`, password: 'long enough pw' },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(secure.headers.get('set-cookie')).toContain('Secure');

    const me = await session({ cookie: cookieOf(res) });
    expect(me.status).toBe(200);
    expect(sessionSchema.parse(me.body)).toEqual(body);
  });

  it('derives a free handle from the email when no username is given', async () => {
    const local = uniqueName('Mixed.Case_');
    const first = sessionSchema.parse((await signUp({ email: `${local}@a.test`, password: 'long enough pw' })).body);
    expect(first.default_entity).toBe(local.toLowerCase());
    const second = sessionSchema.parse((await signUp({ email: `${local}@b.test`, password: 'long enough pw' })).body);
    expect(second.default_entity).toBe(`${local.toLowerCase()}-2`);
  });

  it('answers 409 for a duplicate email (case-insensitive) or a taken username', async () => {
    const user = await createUser();
    const dup = await signUp({ email: user.email.toUpperCase(), password: 'another password' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ detail: 'An account with this email already exists' });
    expect(dup.headers.get('set-cookie')).toBeNull();
    const taken = await signUp({
      email: `${uniqueName('x-')}@example.test`,
      password: 'long enough pw',
      username: user.handle,
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ detail: `The name '${user.handle}' is taken` });
  });

  it('validates email, password and username with 422', async () => {
    const email = `${uniqueName('v-')}@example.test`;
    const short = await signUp({ email, password: 'short' });
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({ loc: ['body', 'password'] });
    for (const bad of ['not-an-email', 'a b@c.d', '@example.test', '']) {
      const res = await signUp({ email: bad, password: 'long enough pw' });
      expect(res.status, bad).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'email']);
    }
    const badHandle = await signUp({ email, password: 'long enough pw', username: 'Has Spaces' });
    expect(badHandle.status).toBe(422);
    expect(badHandle.body.detail[0].loc).toEqual(['body', 'username']);
    const missing = await signUp({ email });
    expect(missing.body.detail).toEqual([{ loc: ['body', 'password'], msg: 'Field required', type: 'missing' }]);
    // None of the rejected attempts created the account.
    expect((await signUp({ email, password: 'long enough pw' })).status).toBe(201);
  });

  it('signs in with the right password (new cookie) and answers 401 otherwise', async () => {
    const user = await createUser();
    const ok = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      body: { email: user.email, password: user.password },
    });
    expect(ok.status).toBe(200);
    expect(sessionSchema.parse(ok.body).default_entity).toBe(user.handle);
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookieOf(ok)).not.toBe(user.cookie);
    expect((await session({ cookie: cookieOf(ok) })).status).toBe(200);

    for (const body of [
      { email: user.email, password: 'wrong password' },
      { email: `${uniqueName('nobody-')}@example.test`, password: user.password },
    ]) {
      const res = await call(signInRoute, 'POST', '/v1/auth/sign-in', { body });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid email or password' });
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const invalid = await call(signInRoute, 'POST', '/v1/auth/sign-in', { body: { email: user.email } });
    expect(invalid.status).toBe(422);
  });

  it('reports the session for a key and for a cookie, and 401 for neither', async () => {
    const user = await createUser();
    const byKey = sessionSchema.parse((await session({ key: user.key })).body);
    const byCookie = sessionSchema.parse((await session({ cookie: user.cookie })).body);
    expect(byKey).toEqual(byCookie);
    expect(byKey.user.email).toBe(user.email);
    const none = await session({});
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ detail: 'Not authenticated' });
    expect((await session({ cookie: 'tb_session=forged' })).status).toBe(401);
    // A present but bad Authorization header is not rescued by a valid cookie.
    expect((await session({ key: 'tb_wrong', cookie: user.cookie })).status).toBe(401);
  });

  it('signs out: the cookie is cleared and stops working, other sessions and keys live on', async () => {
    const user = await createUser();
    const second = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      body: { email: user.email, password: user.password },
    });
    // Another site cannot sign the user out.
    const crossSite = await call(signOutRoute, 'POST', '/v1/auth/sign-out', {
      cookie: user.cookie,
      headers: { origin: 'https://evil.example', host: 'localhost:3000' },
    });
    expect(crossSite.status).toBe(403);
    expect((await session({ cookie: user.cookie })).status).toBe(200);
    const out = await call(signOutRoute, 'POST', '/v1/auth/sign-out', {
      cookie: user.cookie,
      headers: { 'sec-fetch-site': 'same-origin' },
    });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ signed_out: true });
    expect(out.headers.get('set-cookie')).toMatch(/^tb_session=;.*Max-Age=0/);
    expect((await session({ cookie: user.cookie })).status).toBe(401);
    expect((await session({ cookie: cookieOf(second) })).status).toBe(200);
    expect((await session({ key: user.key })).status).toBe(200);
    // Signing out without a session is harmless.
    expect((await call(signOutRoute, 'POST', '/v1/auth/sign-out', {})).status).toBe(200);
  });
});

describe('API keys', () => {
  it('creates a key shown once (tb_…), listed by prefix only; last_used_at is set once it is used', async () => {
    const user = await createUser();
    const created = await createKey(user, { name: 'ci' });
    expect(created.key).toMatch(/^tb_[A-Za-z0-9_-]{20,}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.prefix.length).toBeLessThan(created.key.length);
    expect(created).toMatchObject({ name: 'ci', last_used_at: null, expires_at: null, revoked_at: null });

    const listRes = await call(keysRoute, 'GET', '/v1/api-keys', { key: user.key });
    expect(JSON.stringify(listRes.body)).not.toContain(created.key);
    for (const k of listRes.body.data) expect(k).not.toHaveProperty('key');
    const listed = (await listKeys(user)).find((k: { id: string }) => k.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      name: 'ci',
      prefix: created.prefix,
      created_at: created.created_at,
      last_used_at: null,
      expires_at: null,
      revoked_at: null,
    });

    const used = await session({ key: created.key });
    expect(used.status).toBe(200);
    const after = (await listKeys(user)).find((k: { id: string }) => k.id === created.id);
    expect(after.last_used_at).not.toBeNull();
    expect(Date.parse(after.last_used_at)).toBeGreaterThanOrEqual(Date.parse(created.created_at));

    const validation = await call(keysRoute, 'POST', '/v1/api-keys', { key: user.key, body: { name: '' } });
    expect(validation.status).toBe(422);
    const days = await call(keysRoute, 'POST', '/v1/api-keys', {
      key: user.key,
      body: { name: 'x', expires_in_days: 0 },
    });
    expect(days.status).toBe(422);
    expect(days.body.detail[0].loc).toEqual(['body', 'expires_in_days']);
  });

  it('revokes a key: it stops working with 401 and the listing shows revoked_at', async () => {
    const user = await createUser();
    const created = await createKey(user);
    expect((await session({ key: created.key })).status).toBe(200);
    const res = await call(keyRoute, 'DELETE', `/v1/api-keys/${created.id}`, {
      key: user.key,
      params: { key_id: created.id },
    });
    expect(res.status).toBe(200);
    const revoked = apiKeySchema.parse(res.body);
    expect(revoked.revoked_at).not.toBeNull();
    const denied = await session({ key: created.key });
    expect(denied.status).toBe(401);
    expect(denied.body).toEqual({ detail: 'Not authenticated' });
    const listed = (await listKeys(user)).find((k: { id: string }) => k.id === created.id);
    expect(listed.revoked_at).toBe(revoked.revoked_at);

    // Revoking again answers with the key as it stands; the original key still works.
    const again = await call(keyRoute, 'DELETE', '/x', { key: user.key, params: { key_id: created.id } });
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.revoked_at);
  });

  it("cannot revoke another user's key (404), nor an unknown or malformed id", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const created = await createKey(owner);
    for (const id of [created.id, '00000000-0000-0000-0000-000000000000', 'nope']) {
      const res = await call(keyRoute, 'DELETE', '/x', { key: stranger.key, params: { key_id: id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'API key not found' });
    }
    expect((await session({ key: created.key })).status).toBe(200);
    expect((await listKeys(stranger)).map((k: { id: string }) => k.id)).not.toContain(created.id);
  });

  it('rejects an expired key with 401', async () => {
    const user = await createUser();
    const created = await createKey(user, { name: 'short-lived', expires_in_days: 1 });
    expect(Date.parse(created.expires_at!) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect((await session({ key: created.key })).status).toBe(200);
    const db = await getDb();
    await db
      .update(apiKeys)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiKeys.id, created.id));
    // A write behind the service's back must announce itself, as the services do, or the cached caller
    // lives on for its few seconds.
    await principalChanged([(await session({ key: user.key })).body.user.id]);
    const res = await session({ key: created.key });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('issues keys through the password grant, 401 on a wrong password', async () => {
    const user = await createUser();
    const res = await call(tokenRoute, 'POST', '/v1/auth/token', {
      body: { email: user.email, password: user.password, key_name: 'script', expires_in_days: 30 },
    });
    expect(res.status).toBe(201);
    const created = createdApiKeySchema.parse(res.body);
    expect(created.name).toBe('script');
    expect(created.expires_at).not.toBeNull();
    expect((await session({ key: created.key })).status).toBe(200);
    const defaulted = createdApiKeySchema.parse(
      (await call(tokenRoute, 'POST', '/x', { body: { email: user.email, password: user.password } })).body,
    );
    expect(defaulted.name).toBe('script');

    const wrong = await call(tokenRoute, 'POST', '/v1/auth/token', {
      body: { email: user.email, password: 'not the password' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ detail: 'Invalid email or password' });
    const missing = await call(tokenRoute, 'POST', '/v1/auth/token', { body: { email: user.email } });
    expect(missing.status).toBe(422);
  });
});

describe('cookie-authenticated writes need a same-origin request', () => {
  it('rejects a cookie POST without Origin or Sec-Fetch-Site, or from another origin, with 403', async () => {
    const user = await createUser();
    const attempts: Record<string, string>[] = [
      {},
      { origin: 'https://evil.test', host: 'localhost:3000' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'not a url', host: 'localhost:3000' },
    ];
    for (const headers of attempts) {
      const res = await call(keysRoute, 'POST', '/v1/api-keys', { cookie: user.cookie, headers, body: { name: 'x' } });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.detail).toMatch(/^Cross-site request rejected/);
    }
    // Nothing was created by the rejected requests.
    expect(await listKeys(user)).toHaveLength(1);
  });

  it('accepts a cookie POST whose Origin matches the Host, or with Sec-Fetch-Site: same-origin', async () => {
    const user = await createUser();
    const a = await call(keysRoute, 'POST', '/v1/api-keys', {
      cookie: user.cookie,
      headers: SAME_ORIGIN,
      body: { name: 'a' },
    });
    expect(a.status).toBe(201);
    const b = await call(keysRoute, 'POST', '/v1/api-keys', {
      cookie: user.cookie,
      headers: { 'sec-fetch-site': 'same-origin' },
      body: { name: 'b' },
    });
    expect(b.status).toBe(201);
    const c = await call(keysRoute, 'POST', '/v1/api-keys', {
      cookie: user.cookie,
      headers: { origin: 'https://tuneboard.example', host: 'internal:3000', 'x-forwarded-host': 'tuneboard.example' },
      body: { name: 'c' },
    });
    expect(c.status).toBe(201);
    // Reads need no Origin.
    expect((await call(keysRoute, 'GET', '/v1/api-keys', { cookie: user.cookie })).status).toBe(200);
  });

  it('needs no Origin for bearer-key writes', async () => {
    const user = await createUser();
    const res = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      headers: { origin: 'https://evil.test', 'sec-fetch-site': 'cross-site' },
      body: { project: 'p', name: uniqueName('m-'), base_model: TEST_BASE_MODEL },
    });
    expect(res.status).toBe(200);
    modelSchema.parse(res.body);
  });
});

describe('teams', () => {
  async function createTeam(owner: TestUser, name = uniqueName('team-')) {
    const res = await call(teamsRoute, 'POST', '/v1/teams', { key: owner.key, body: { name } });
    expect(res.status).toBe(201);
    return teamSchema.parse(res.body);
  }

  function addMember(actor: TestUser, team: string, body: Record<string, unknown>) {
    return call(membersRoute, 'POST', `/v1/teams/${team}/members`, { key: actor.key, params: { team }, body });
  }

  function removeMember(actor: TestUser, team: string, user_id: string) {
    return call(memberRoute, 'DELETE', `/v1/teams/${team}/members/${user_id}`, {
      key: actor.key,
      params: { team, user_id },
    });
  }

  it('creates a team (201) owned by the caller; a taken name is 409', async () => {
    const owner = await createUser();
    const name = uniqueName('team-');
    const team = await createTeam(owner, name);
    expect(team).toMatchObject({ name, role: 'owner' });
    expect(team.members).toEqual([
      { user_id: await userId(owner), email: owner.email, name: owner.handle, role: 'owner' },
    ]);

    const dup = await call(teamsRoute, 'POST', '/v1/teams', { key: owner.key, body: { name } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ detail: `The name '${name}' is taken` });
    const userName = await call(teamsRoute, 'POST', '/v1/teams', { key: owner.key, body: { name: owner.handle } });
    expect(userName.status).toBe(409);
    const invalid = await call(teamsRoute, 'POST', '/v1/teams', { key: owner.key, body: { name: 'Bad Name' } });
    expect(invalid.status).toBe(422);

    const listed = await call(teamsRoute, 'GET', '/v1/teams', { key: owner.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t: unknown) => teamSchema.parse(t).name)).toEqual([name]);
    const me = sessionSchema.parse((await session({ key: owner.key })).body);
    expect(me.entities.map((e) => [e.name, e.kind, e.role])).toContainEqual([name, 'team', 'owner']);
  });

  it('adds a member by email; the member works in the team entity, a non-member cannot', async () => {
    const owner = await createUser();
    const member = await createUser();
    const outsider = await createUser();
    const team = await createTeam(owner);

    const unknown = await addMember(owner, team.name, { email: `${uniqueName('ghost-')}@example.test` });
    expect(unknown.status).toBe(404);
    const added = await addMember(owner, team.name, { email: member.email.toUpperCase() });
    expect(added.status).toBe(200);
    expect(teamSchema.parse(added.body).members.map((m) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [member.email, 'member'],
    ]);

    const ownersModel = await createModel(owner, { entity: team.name });
    expect(ownersModel.entity).toBe(team.name);
    const membersModel = await createModel(member, { entity: team.name });
    expect(membersModel.entity).toBe(team.name);

    const memberList = await call(modelsRoute, 'GET', '/v1/preview/models', {
      key: member.key,
      query: { entity: team.name },
    });
    expect(
      modelListSchema
        .parse(memberList.body)
        .data.map((m) => m.id)
        .sort(),
    ).toEqual([ownersModel.id, membersModel.id].sort());
    const read = await call(modelRoute, 'GET', '/x', { key: member.key, params: { model_id: ownersModel.id } });
    expect(read.status).toBe(200);
    modelSummarySchema.parse(read.body);

    const outsiderCreate = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: outsider.key,
      body: { entity: team.name, project: 'p', name: 'm', base_model: TEST_BASE_MODEL },
    });
    expect(outsiderCreate.status).toBe(403);
    expect(outsiderCreate.body).toEqual({ detail: `Entity '${team.name}' is not accessible with this API key` });
    const outsiderRead = await call(modelRoute, 'GET', '/x', {
      key: outsider.key,
      params: { model_id: ownersModel.id },
    });
    expect(outsiderRead.status).toBe(404);
    const outsiderList = await call(modelsRoute, 'GET', '/v1/preview/models', {
      key: outsider.key,
      query: { entity: team.name },
    });
    expect(modelListSchema.parse(outsiderList.body).data).toEqual([]);
    expect((await call(teamsRoute, 'GET', '/v1/teams', { key: outsider.key })).body.data).toEqual([]);
  });

  it('lets only owners and admins manage members', async () => {
    const owner = await createUser();
    const member = await createUser();
    const admin = await createUser();
    const newcomer = await createUser();
    const outsider = await createUser();
    const team = await createTeam(owner);
    await addMember(owner, team.name, { email: member.email });
    await addMember(owner, team.name, { email: admin.email, role: 'admin' });

    const byMember = await addMember(member, team.name, { email: newcomer.email });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ detail: 'Only team owners and admins can manage members' });
    const byOutsider = await addMember(outsider, team.name, { email: newcomer.email });
    expect(byOutsider.status).toBe(404);
    expect(byOutsider.body).toEqual({ detail: 'Team not found' });
    const byAdmin = await addMember(admin, team.name, { email: newcomer.email });
    expect(byAdmin.status).toBe(200);

    const memberRemovesAdmin = await removeMember(member, team.name, await userId(admin));
    expect(memberRemovesAdmin.status).toBe(403);
    const ownerCannotGo = await removeMember(admin, team.name, await userId(owner));
    expect(ownerCannotGo.status).toBe(409);
    const demoteOwner = await addMember(admin, team.name, { email: owner.email, role: 'member' });
    expect(demoteOwner.status).toBe(409);
    const notMember = await removeMember(owner, team.name, await userId(outsider));
    expect(notMember.status).toBe(404);
    expect((await removeMember(owner, team.name, 'nope')).status).toBe(404);
  });

  it('removing a member takes their access away at once; a member may leave', async () => {
    const owner = await createUser();
    const member = await createUser();
    const leaver = await createUser();
    const team = await createTeam(owner);
    await addMember(owner, team.name, { email: member.email });
    await addMember(owner, team.name, { email: leaver.email });
    const model = await createModel(owner, { entity: team.name });
    expect((await call(modelRoute, 'GET', '/x', { key: member.key, params: { model_id: model.id } })).status).toBe(200);

    const removed = await removeMember(owner, team.name, await userId(member));
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: true });
    expect((await call(modelRoute, 'GET', '/x', { key: member.key, params: { model_id: model.id } })).status).toBe(404);
    const create = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: member.key,
      body: { entity: team.name, project: 'p', name: 'after', base_model: TEST_BASE_MODEL },
    });
    expect(create.status).toBe(403);
    const del = await call(modelRoute, 'DELETE', '/x', { key: member.key, params: { model_id: model.id } });
    expect(del.status).toBe(404);

    const left = await removeMember(leaver, team.name, await userId(leaver));
    expect(left.status).toBe(200);
    expect((await call(modelRoute, 'GET', '/x', { key: leaver.key, params: { model_id: model.id } })).status).toBe(404);
    // The owner still sees the model.
    expect((await call(modelRoute, 'GET', '/x', { key: owner.key, params: { model_id: model.id } })).status).toBe(200);
  });
});
