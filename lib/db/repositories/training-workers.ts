import 'server-only';
import { desc, eq, gt, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { preparedQuery } from '../prepared';
import { trainingWorkers } from '../schema';

export type TrainingWorkerRow = typeof trainingWorkers.$inferSelect;

/** Records that a worker was seen now (claim or heartbeat); capabilities and info only when it sent them. */
export async function touchWorker(
  db: DbOrTx,
  input: {
    id: string;
    now: Date;
    currentJobId: string | null;
    capabilities?: Record<string, unknown>;
    info?: Record<string, unknown>;
  },
): Promise<void> {
  const set: Partial<typeof trainingWorkers.$inferInsert> = { lastSeenAt: input.now, currentJobId: input.currentJobId };
  if (input.capabilities) set.capabilities = input.capabilities;
  if (input.info) set.info = input.info;
  await db
    .insert(trainingWorkers)
    .values({
      id: input.id,
      capabilities: input.capabilities ?? {},
      info: input.info ?? {},
      currentJobId: input.currentJobId,
      firstSeenAt: input.now,
      lastSeenAt: input.now,
    })
    .onConflictDoUpdate({ target: trainingWorkers.id, set });
}

/** Workers seen since `since`, most recently seen first. */
export async function listWorkersSeenSince(db: DbOrTx, since: Date, limit = 500): Promise<TrainingWorkerRow[]> {
  // The workers page polls it, and every queued job's waiting reason reads it: built once (lib/db/prepared.ts).
  const query = preparedQuery(db, 'workers.seenSince', () =>
    db
      .select()
      .from(trainingWorkers)
      .where(gt(trainingWorkers.lastSeenAt, sql.placeholder('since')))
      .orderBy(desc(trainingWorkers.lastSeenAt))
      .limit(sql.placeholder('limit'))
      .prepare(''),
  );
  // Placeholders skip the column's own encoding: the timestamp goes as the text PostgreSQL parses.
  return query.execute({ since: since.toISOString(), limit });
}

/** The worker no longer runs `jobId` (it finished or failed it); a newer job it already claimed is kept. */
export async function clearWorkerJob(db: DbOrTx, workerId: string, jobId: string): Promise<void> {
  await db
    .update(trainingWorkers)
    .set({ currentJobId: null })
    .where(sql`${trainingWorkers.id} = ${workerId} AND ${trainingWorkers.currentJobId} = ${jobId}::uuid`);
}

/** Registry rows of workers gone for longer than `before`: kept a day for the dashboard, then dropped. */
export async function deleteWorkersSeenBefore(db: DbOrTx, before: Date): Promise<void> {
  await db.delete(trainingWorkers).where(sql`${trainingWorkers.lastSeenAt} < ${before.toISOString()}::timestamptz`);
}

/**
 * Removes a worker that signed off, unless it still holds a job (its lease decides that job's fate). Returns
 * whether it was removed.
 */
export async function deleteIdleWorker(db: DbOrTx, id: string): Promise<boolean> {
  const removed = await db
    .delete(trainingWorkers)
    .where(sql`${trainingWorkers.id} = ${id} AND ${trainingWorkers.currentJobId} IS NULL`)
    .returning({ id: trainingWorkers.id });
  return removed.length > 0;
}

export async function findWorker(db: DbOrTx, id: string): Promise<TrainingWorkerRow | undefined> {
  const [row] = await db.select().from(trainingWorkers).where(eq(trainingWorkers.id, id)).limit(1);
  return row;
}
