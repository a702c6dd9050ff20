import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as repo from '@/lib/db/repositories/accounts';
import type { ApiKeyRow, Membership, UserRow } from '@/lib/db/repositories/accounts';
import type { ApiKeyDto, SessionDto, SignUpBody, TeamDto } from '@/lib/schemas/accounts';
import { assertNotThrottled, recordLoginFailure, recordLoginSuccess } from './login-throttle';
import { API_KEY_PREFIX, hashPassword, newSecret, sha256, verifyPassword } from './credentials';
import { cachedPrincipal, principalChanged } from './principal-cache';

/** Who is calling and which entities they may act in; built once per request. */
export interface Principal {
  userId: string;
  email: string;
  name: string;
  via: 'api_key' | 'session';
  apiKeyId: string | null;
  personalEntity: Membership;
  memberships: Membership[];
}

export function entityByName(principal: Principal, name: string): Membership | undefined {
  return principal.memberships.find((m) => m.name === name);
}

export function accessibleEntityIds(principal: Principal): string[] {
  return principal.memberships.map((m) => m.id);
}

/**
 * The entities a list covers: every one the caller belongs to, or only `entity`. An entity outside the caller's
 * scope lists like an empty one: existence does not leak.
 */
export function listScope(principal: Principal, entity: string | undefined): string[] {
  if (entity === undefined) return accessibleEntityIds(principal);
  const found = entityByName(principal, entity);
  return found ? [found.id] : [];
}

async function buildPrincipal(user: UserRow, via: Principal['via'], apiKeyId: string | null): Promise<Principal> {
  const db = await getDb();
  const memberships = await repo.listMemberships(db, user.id);
  const personalEntity = memberships.find((m) => m.id === user.personalEntityId);
  if (!personalEntity) throw new Error(`user ${user.id} has no personal entity membership`);
  return { userId: user.id, email: user.email, name: user.name, via, apiKeyId, personalEntity, memberships };
}

/**
 * The principal of a user acting on their own behalf, without a key or session: work the server runs for them later
 * (an eval run resolves its targets in its creator's scope as it was when the run executes). Undefined when the user
 * is gone.
 */
export async function principalForUser(userId: string): Promise<Principal | undefined> {
  const user = await repo.findUserById(await getDb(), userId);
  return user ? buildPrincipal(user, 'api_key', null) : undefined;
}

// last_used_at is informational: writing it on every request would turn each read into a write.
const TOUCH_INTERVAL_MS = 60_000;

function principalOf(row: repo.PrincipalRow, via: Principal['via']): Principal {
  const personalEntity = row.memberships.find((m) => m.id === row.personalEntityId);
  if (!personalEntity) throw new Error(`user ${row.userId} has no personal entity membership`);
  return {
    userId: row.userId,
    email: row.email,
    name: row.name,
    via,
    apiKeyId: row.apiKeyId,
    personalEntity,
    memberships: row.memberships,
  };
}

// When this process last wrote each key's last_used_at (the cached row does not see later writes).
const touchedAt = new Map<string, number>();

export async function principalFromApiKey(rawKey: string): Promise<Principal | null> {
  const keyHash = sha256(rawKey);
  const found = await cachedPrincipal(`key:${keyHash}`, async () => {
    const row = await repo.findPrincipalByApiKeyHash(await getDb(), keyHash);
    if (!row) return undefined;
    if (row.keyLastUsedAt && !touchedAt.has(row.apiKeyId!)) touchedAt.set(row.apiKeyId!, row.keyLastUsedAt.getTime());
    return { value: principalOf(row, 'api_key'), userId: row.userId, validUntil: row.validUntil };
  });
  if (!found) return null;
  const now = Date.now();
  const last = touchedAt.get(found.apiKeyId!);
  if (last === undefined || now - last > TOUCH_INTERVAL_MS) {
    touchedAt.set(found.apiKeyId!, now);
    if (touchedAt.size > 10_000) touchedAt.delete(touchedAt.keys().next().value!);
    await repo.touchApiKey(await getDb(), found.apiKeyId!, new Date(now));
  }
  return found;
}

export async function principalFromSession(token: string): Promise<Principal | null> {
  const tokenHash = sha256(token);
  const found = await cachedPrincipal(`session:${tokenHash}`, async () => {
    const row = await repo.findPrincipalBySessionHash(await getDb(), tokenHash);
    return row && { value: principalOf(row, 'session'), userId: row.userId, validUntil: row.validUntil };
  });
  return found ?? null;
}

/** The dashboard's session cookie; read by lib/api for API calls and by server-rendered pages. */
export const SESSION_COOKIE = 'tb_session';

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

async function startSession(userId: string): Promise<{ token: string; expiresAt: Date }> {
  const db = await getDb();
  const token = newSecret('');
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await repo.insertSession(db, { tokenHash: sha256(token), userId, expiresAt });
  // Opportunistic clean-up keeps the table small without a scheduler.
  if (Math.random() < 0.05) await repo.deleteExpiredSessions(db);
  return { token, expiresAt };
}

function handleFromEmail(email: string): string {
  const local = email
    .split('@')[0]
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return (local || 'user').slice(0, 32).padEnd(2, '0');
}

/** A fresh instance (no account yet) greets with an invitation to create the first one, not "welcome back". */
export async function hasAnyAccount(): Promise<boolean> {
  return repo.anyUserExists(await getDb());
}

export async function signUp(input: SignUpBody): Promise<{ user: UserRow; token: string; expiresAt: Date }> {
  const db = await getDb();
  // Hash first: a taken email must not answer measurably faster than a new one. (The 409 itself cannot be
  // hidden: an account is usable at once, with no mailbox to prove ownership; rate limits make probing slow.)
  const passwordHash = await hashPassword(input.password);
  if (await repo.findUserByEmail(db, input.email)) {
    throw new ApiError('conflict', 'An account with this email already exists');
  }
  let handle = input.username ?? handleFromEmail(input.email);
  if (await repo.entityNameExists(db, handle)) {
    if (input.username) throw new ApiError('conflict', `The name '${handle}' is taken`);
    const base = handle.slice(0, 34);
    for (let i = 2; await repo.entityNameExists(db, handle); i++) handle = `${base}-${i}`;
  }
  let user: UserRow;
  try {
    user = await db.transaction((tx) =>
      repo.insertUserWithPersonalEntity(tx, {
        email: input.email,
        name: input.name?.trim() || handle,
        passwordHash,
        handle,
      }),
    );
  } catch (err) {
    // Two sign-ups racing for one email or handle: the unique index decides.
    if (isUniqueViolation(err)) throw new ApiError('conflict', 'An account with this email or name already exists');
    throw err;
  }
  const session = await startSession(user.id);
  return { user, ...session };
}

// A hash that no password matches in practice, made once: unknown emails verify against it, so they cost
// exactly one scrypt run, like known ones (hashing a fresh one each time cost two, and told them apart).
let timingEqualiser: Promise<string> | undefined;

async function checkPassword(email: string, password: string, address: string | null): Promise<UserRow> {
  await assertNotThrottled(email, address);
  const db = await getDb();
  const user = await repo.findUserByEmail(db, email);
  timingEqualiser ??= hashPassword(newSecret(''));
  const equaliser = await timingEqualiser;
  const ok = user
    ? await verifyPassword(password, user.passwordHash)
    : await verifyPassword(password, equaliser).then(() => false);
  if (!user || !ok) {
    await recordLoginFailure(email, address);
    throw new ApiError('unauthenticated', 'Invalid email or password');
  }
  await recordLoginSuccess(email);
  return user;
}

export async function signIn(email: string, password: string, address: string | null = null) {
  const user = await checkPassword(email, password, address);
  return { user, ...(await startSession(user.id)) };
}

export async function signOut(token: string): Promise<void> {
  const db = await getDb();
  const user = await repo.findUserBySessionHash(db, sha256(token));
  await repo.deleteSession(db, sha256(token));
  if (user) await principalChanged([user.id]);
}

export function toSessionDto(principal: Principal): SessionDto {
  return {
    user: { id: principal.userId, email: principal.email, name: principal.name },
    default_entity: principal.personalEntity.name,
    entities: principal.memberships.map((m) => ({ id: m.id, name: m.name, kind: m.kind, role: m.role })),
  };
}

function toApiKeyDto(row: ApiKeyRow): ApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

export async function createApiKey(userId: string, input: { name: string; expires_in_days?: number | null }) {
  const db = await getDb();
  const key = newSecret(API_KEY_PREFIX);
  const row = await repo.insertApiKey(db, {
    userId,
    name: input.name,
    prefix: key.slice(0, API_KEY_PREFIX.length + 6),
    keyHash: sha256(key),
    expiresAt: input.expires_in_days ? new Date(Date.now() + input.expires_in_days * 86_400_000) : null,
  });
  return { ...toApiKeyDto(row), key };
}

/** Password grant for scripts and CI: trade credentials for a fresh API key, no cookie needed. */
export async function createApiKeyWithPassword(
  input: { email: string; password: string; key_name: string; expires_in_days?: number | null },
  address: string | null = null,
) {
  const user = await checkPassword(input.email, input.password, address);
  return createApiKey(user.id, { name: input.key_name, expires_in_days: input.expires_in_days });
}

export async function listApiKeys(userId: string): Promise<ApiKeyDto[]> {
  return (await repo.listApiKeys(await getDb(), userId)).map(toApiKeyDto);
}

export async function revokeApiKey(userId: string, id: string): Promise<ApiKeyDto> {
  const db = await getDb();
  const revoked = await repo.revokeApiKey(db, userId, id);
  if (revoked) {
    await principalChanged([userId]);
    return toApiKeyDto(revoked);
  }
  // Revoking twice is harmless: answer with the key as it stands.
  const existing = await repo.findApiKey(db, userId, id);
  if (!existing) throw ApiError.notFound('API key not found');
  return toApiKeyDto(existing);
}

export async function listTeams(principal: Principal): Promise<TeamDto[]> {
  const db = await getDb();
  const teams = principal.memberships.filter((m) => m.kind === 'team');
  const members = await repo.listMembers(
    db,
    teams.map((t) => t.id),
  );
  const created = new Map<string, Date>();
  for (const team of teams) {
    const entity = await repo.findEntityByName(db, team.name);
    if (entity) created.set(team.id, entity.createdAt);
  }
  return teams.map((t) => ({
    id: t.id,
    name: t.name,
    role: t.role,
    created_at: (created.get(t.id) ?? new Date(0)).toISOString(),
    members: members
      .filter((m) => m.entityId === t.id)
      .map((m) => ({ user_id: m.userId, email: m.email, name: m.name, role: m.role })),
  }));
}

async function teamOf(principal: Principal, name: string, needAdmin: boolean): Promise<Membership> {
  const team = principal.memberships.find((m) => m.name === name && m.kind === 'team');
  if (!team) throw ApiError.notFound('Team not found');
  if (needAdmin && team.role === 'member')
    throw new ApiError('forbidden', 'Only team owners and admins can manage members');
  return team;
}

export async function createTeam(principal: Principal, name: string): Promise<TeamDto> {
  const db = await getDb();
  if (await repo.entityNameExists(db, name)) throw new ApiError('conflict', `The name '${name}' is taken`);
  try {
    await db.transaction((tx) => repo.insertTeam(tx, name, principal.userId));
    await principalChanged([principal.userId]);
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('conflict', `The name '${name}' is taken`);
    throw err;
  }
  const refreshed = await buildPrincipal(
    (await repo.findUserById(db, principal.userId))!,
    principal.via,
    principal.apiKeyId,
  );
  return (await listTeams(refreshed)).find((t) => t.name === name)!;
}

export async function addTeamMember(principal: Principal, teamName: string, email: string, role: 'admin' | 'member') {
  const db = await getDb();
  const team = await teamOf(principal, teamName, true);
  const user = await repo.findUserByEmail(db, email);
  if (!user) throw ApiError.notFound(`No user with email ${email}: they need to sign up first`);
  const current = (await repo.listMembers(db, [team.id])).find((m) => m.userId === user.id);
  if (current?.role === 'owner') throw new ApiError('conflict', 'The team owner cannot be changed');
  await repo.upsertMember(db, team.id, user.id, role);
  await principalChanged([user.id]);
  return (await listTeams(principal)).find((t) => t.id === team.id)!;
}

export async function removeTeamMember(principal: Principal, teamName: string, userId: string) {
  const db = await getDb();
  const leavingSelf = userId === principal.userId;
  const team = await teamOf(principal, teamName, !leavingSelf);
  const members = await repo.listMembers(db, [team.id]);
  const target = members.find((m) => m.userId === userId);
  if (!target) throw ApiError.notFound('Member not found');
  if (target.role === 'owner') throw new ApiError('conflict', 'The team owner cannot be removed');
  await repo.deleteMember(db, team.id, userId);
  await principalChanged([userId]);
  return { removed: true as const };
}

export function isUniqueViolation(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err as { code?: string; cause?: unknown } | undefined; e && !seen.has(e); e = e.cause as typeof e) {
    seen.add(e);
    if (e.code === '23505') return true;
  }
  return false;
}
