import 'server-only';
import { and, desc, eq, inArray, max } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { artifacts } from '../schema';

export type ArtifactRow = typeof artifacts.$inferSelect;

/** Inserts the next version of (entity, project, name); the unique index arbitrates concurrent uploads. */
export async function insertNextVersion(
  db: DbOrTx,
  input: Omit<typeof artifacts.$inferInsert, 'version' | 'id' | 'createdAt'>,
): Promise<ArtifactRow> {
  for (let attempt = 0; ; attempt++) {
    const [{ current }] = await db
      .select({ current: max(artifacts.version) })
      .from(artifacts)
      .where(
        and(
          eq(artifacts.entityId, input.entityId),
          eq(artifacts.project, input.project),
          eq(artifacts.name, input.name),
        ),
      );
    const [row] = await db
      .insert(artifacts)
      .values({ ...input, version: current === null ? 0 : current + 1 })
      .onConflictDoNothing()
      .returning();
    if (row) return row;
    if (attempt >= 20) throw new Error('could not allocate an artifact version');
  }
}

export async function findArtifact(
  db: DbOrTx,
  q: { entityId: string; project: string; name: string; version?: number },
): Promise<ArtifactRow | undefined> {
  const conditions = [eq(artifacts.entityId, q.entityId), eq(artifacts.project, q.project), eq(artifacts.name, q.name)];
  if (q.version !== undefined) conditions.push(eq(artifacts.version, q.version));
  const [row] = await db
    .select()
    .from(artifacts)
    .where(and(...conditions))
    .orderBy(desc(artifacts.version))
    .limit(1);
  return row;
}

export async function listArtifactsOf(db: DbOrTx, entityIds: string[], project?: string) {
  if (entityIds.length === 0) return [];
  const conditions = [inArray(artifacts.entityId, entityIds)];
  if (project !== undefined) conditions.push(eq(artifacts.project, project));
  return db
    .select()
    .from(artifacts)
    .where(and(...conditions))
    .orderBy(desc(artifacts.createdAt))
    .limit(200);
}

/** Whether any artifact version lives under `prefix` (the orphan sweep keeps those files). */
export async function prefixInUse(db: DbOrTx, prefix: string): Promise<boolean> {
  const [row] = await db.select({ id: artifacts.id }).from(artifacts).where(eq(artifacts.prefix, prefix)).limit(1);
  return row !== undefined;
}
