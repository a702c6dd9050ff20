import 'server-only';
import { and, asc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { apiKeys, entities, entityMembers, sessions, users } from '../schema';

export type UserRow = typeof users.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type Role = 'owner' | 'admin' | 'member';

export interface Membership {
  id: string;
  name: string;
  kind: 'user' | 'team';
  role: Role;
}

export async function findUserByEmail(db: DbOrTx, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return row;
}

/** Whether the server has any account at all (a fresh instance has none). */
export async function anyUserExists(db: DbOrTx): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).limit(1);
  return rows.length > 0;
}

export async function entityNameExists(db: DbOrTx, name: string): Promise<boolean> {
  const [row] = await db.select({ id: entities.id }).from(entities).where(eq(entities.name, name)).limit(1);
  return Boolean(row);
}

export async function insertUserWithPersonalEntity(
  db: DbOrTx,
  input: { email: string; name: string; passwordHash: string; handle: string },
): Promise<UserRow> {
  const [entity] = await db.insert(entities).values({ name: input.handle, kind: 'user' }).returning();
  const [user] = await db
    .insert(users)
    .values({ email: input.email, name: input.name, passwordHash: input.passwordHash, personalEntityId: entity.id })
    .returning();
  await db.insert(entityMembers).values({ entityId: entity.id, userId: user.id, role: 'owner' });
  return user;
}

export async function insertSession(db: DbOrTx, input: { tokenHash: string; userId: string; expiresAt: Date }) {
  await db.insert(sessions).values(input);
}

export async function findUserBySessionHash(db: DbOrTx, tokenHash: string): Promise<UserRow | undefined> {
  const [row] = await db
    .select({ user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, new Date())))
    .limit(1);
  return row?.user;
}

export async function deleteSession(db: DbOrTx, tokenHash: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}

export async function deleteExpiredSessions(db: DbOrTx): Promise<void> {
  await db.delete(sessions).where(lt(sessions.expiresAt, new Date()));
}

export async function insertApiKey(
  db: DbOrTx,
  input: { userId: string; name: string; prefix: string; keyHash: string; expiresAt: Date | null },
): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(input).returning();
  return row;
}

/** A usable key: not revoked and not expired. */
export async function findActiveApiKey(
  db: DbOrTx,
  keyHash: string,
): Promise<{ key: ApiKeyRow; user: UserRow } | undefined> {
  const [row] = await db
    .select({ key: apiKeys, user: users })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(
      and(
        eq(apiKeys.keyHash, keyHash),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, new Date())),
      ),
    )
    .limit(1);
  return row;
}

export async function touchApiKey(db: DbOrTx, id: string, at: Date): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id));
}

export async function listApiKeys(db: DbOrTx, userId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

export async function revokeApiKey(db: DbOrTx, userId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .returning();
  return row;
}

export async function findApiKey(db: DbOrTx, userId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, userId)))
    .limit(1);
  return row;
}

export async function listMemberships(db: DbOrTx, userId: string): Promise<Membership[]> {
  return db
    .select({ id: entities.id, name: entities.name, kind: entities.kind, role: entityMembers.role })
    .from(entityMembers)
    .innerJoin(entities, eq(entities.id, entityMembers.entityId))
    .where(eq(entityMembers.userId, userId))
    .orderBy(asc(entities.kind), asc(entities.name));
}

export async function insertTeam(db: DbOrTx, name: string, ownerId: string) {
  const [entity] = await db.insert(entities).values({ name, kind: 'team' }).returning();
  await db.insert(entityMembers).values({ entityId: entity.id, userId: ownerId, role: 'owner' });
  return entity;
}

export async function findEntityByName(db: DbOrTx, name: string) {
  const [row] = await db.select().from(entities).where(eq(entities.name, name)).limit(1);
  return row;
}

export async function listMembers(db: DbOrTx, entityIds: string[]) {
  if (entityIds.length === 0) return [];
  return db
    .select({
      entityId: entityMembers.entityId,
      userId: users.id,
      email: users.email,
      name: users.name,
      role: entityMembers.role,
    })
    .from(entityMembers)
    .innerJoin(users, eq(users.id, entityMembers.userId))
    .where(inArray(entityMembers.entityId, entityIds))
    .orderBy(asc(entityMembers.createdAt), asc(users.email));
}

export async function upsertMember(db: DbOrTx, entityId: string, userId: string, role: Role): Promise<void> {
  await db
    .insert(entityMembers)
    .values({ entityId, userId, role })
    .onConflictDoUpdate({ target: [entityMembers.entityId, entityMembers.userId], set: { role } });
}

export async function deleteMember(db: DbOrTx, entityId: string, userId: string): Promise<boolean> {
  const rows = await db
    .delete(entityMembers)
    .where(and(eq(entityMembers.entityId, entityId), eq(entityMembers.userId, userId)))
    .returning({ userId: entityMembers.userId });
  return rows.length > 0;
}

export async function findUserById(db: DbOrTx, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row;
}

/** A caller with everything a request needs to know about them, read in one query. */
export interface PrincipalRow {
  userId: string;
  email: string;
  name: string;
  personalEntityId: string;
  apiKeyId: string | null;
  keyLastUsedAt: Date | null;
  /** When the credential stops being valid on its own (key or session expiry). */
  validUntil: Date | null;
  memberships: Membership[];
}

// Memberships ride along as one JSON array, ordered as listMemberships orders them (kind, then name).
const membershipsJson = sql`coalesce(
  json_agg(json_build_object('id', e.id, 'name', e.name, 'kind', e.kind, 'role', m.role) order by e.kind, e.name)
    filter (where e.id is not null),
  '[]'::json)`;

function toPrincipalRow(row: Record<string, unknown> | undefined): PrincipalRow | undefined {
  if (!row) return undefined;
  const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return {
    userId: row.user_id as string,
    email: row.email as string,
    name: row.name as string,
    personalEntityId: row.personal_entity_id as string,
    apiKeyId: (row.key_id as string | null) ?? null,
    keyLastUsedAt: date(row.last_used_at),
    validUntil: date(row.valid_until),
    memberships: (typeof row.memberships === 'string' ? JSON.parse(row.memberships) : row.memberships) as Membership[],
  };
}

/** An active (not revoked, not expired) API key's owner and memberships: authentication and scope in one query. */
export async function findPrincipalByApiKeyHash(db: DbOrTx, keyHash: string): Promise<PrincipalRow | undefined> {
  const result = (await db.execute(sql`
    select k.id as key_id, k.last_used_at, k.expires_at as valid_until,
           u.id as user_id, u.email, u.name, u.personal_entity_id, ${membershipsJson} as memberships
    from api_keys k
    join users u on u.id = k.user_id
    left join entity_members m on m.user_id = u.id
    left join entities e on e.id = m.entity_id
    where k.key_hash = ${keyHash} and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
    group by k.id, u.id`)) as { rows: Record<string, unknown>[] };
  return toPrincipalRow(result.rows[0]);
}

/** A live session's user and memberships, in one query. */
export async function findPrincipalBySessionHash(db: DbOrTx, tokenHash: string): Promise<PrincipalRow | undefined> {
  const result = (await db.execute(sql`
    select null as key_id, null as last_used_at, s.expires_at as valid_until,
           u.id as user_id, u.email, u.name, u.personal_entity_id, ${membershipsJson} as memberships
    from sessions s
    join users u on u.id = s.user_id
    left join entity_members m on m.user_id = u.id
    left join entities e on e.id = m.entity_id
    where s.token_hash = ${tokenHash} and s.expires_at > now()
    group by s.token_hash, u.id`)) as { rows: Record<string, unknown>[] };
  return toPrincipalRow(result.rows[0]);
}
