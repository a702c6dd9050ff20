import 'server-only';
import { and, eq, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { jobEvents, models, trainingJobs } from '../schema';
import type { TrainingJobRow } from './training';

/**
 * Claims the next runnable job: the oldest QUEUED job of a model that has no RUNNING job and no older
 * QUEUED job (jobs of one model run one at a time, FIFO; docs/contract.md §3.6.7). SKIP LOCKED lets several workers
 * claim concurrently without ever taking the same row.
 */
export async function claimNextJob(
  db: DbOrTx,
  input: { workerId: string; kinds: ('rl' | 'sft')[]; modelIds?: string[]; baseModels: string[]; now: Date },
): Promise<TrainingJobRow | undefined> {
  if (input.baseModels.length === 0) return undefined;
  const kinds = sql.join(
    input.kinds.map((k) => sql`${k}`),
    sql`, `,
  );
  const now = sql`${input.now.toISOString()}::timestamptz`;
  const onlyModels = input.modelIds?.length
    ? sql`AND j.model_id IN (${sql.join(
        input.modelIds.map((id) => sql`${id}::uuid`),
        sql`, `,
      )})`
    : sql``;
  // Only jobs of models this worker can train (its backends and base models, resolved by the caller).
  const onlyBases = sql`AND j.model_id IN (SELECT m.id FROM ${models} m WHERE m.base_model IN (${sql.join(
    input.baseModels.map((b) => sql`${b}`),
    sql`, `,
  )}))`;
  // Both drivers answer raw queries with { rows }; the generic driver type does not say so.
  const result = (await db.execute(sql`
    UPDATE ${trainingJobs} SET
      status = 'RUNNING',
      worker_id = ${input.workerId},
      heartbeat_at = ${now},
      progress_at = ${now},
      started_at = coalesce(started_at, ${now}),
      attempts = attempts + 1
    WHERE id = (
      SELECT j.id FROM ${trainingJobs} j
      WHERE j.status = 'QUEUED' AND j.kind IN (${kinds}) ${onlyModels} ${onlyBases}
        AND NOT EXISTS (SELECT 1 FROM ${trainingJobs} r WHERE r.model_id = j.model_id AND r.status = 'RUNNING')
        AND NOT EXISTS (
          SELECT 1 FROM ${trainingJobs} e
          WHERE e.model_id = j.model_id AND e.status = 'QUEUED' AND (e.created_at, e.id) < (j.created_at, j.id)
        )
      ORDER BY j.created_at, j.id
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id`)) as unknown as { rows: { id?: string }[] };
  const id = result.rows[0]?.id;
  if (!id) return undefined;
  const [row] = await db.select().from(trainingJobs).where(eq(trainingJobs.id, id));
  return row;
}

/** The job row, locked for the rest of the transaction. */
export async function lockJob(db: DbOrTx, id: string): Promise<TrainingJobRow | undefined> {
  const [row] = await db.select().from(trainingJobs).where(eq(trainingJobs.id, id)).for('update').limit(1);
  return row;
}

export async function hasStarted(db: DbOrTx, jobId: string): Promise<boolean> {
  const [row] = await db
    .select({ seq: jobEvents.seq })
    .from(jobEvents)
    .where(and(eq(jobEvents.jobId, jobId), eq(jobEvents.type, 'training_started')))
    .limit(1);
  return Boolean(row);
}

/** RUNNING jobs whose lease ran out, or that made no progress for too long, or whose worker is a dead process. */
export async function findStaleJobs(
  db: DbOrTx,
  opts: { heartbeatBefore: Date; progressBefore: Date; deadWorkerPrefix?: { prefix: string; except: string } },
) {
  const conditions = [
    lt(trainingJobs.heartbeatAt, opts.heartbeatBefore),
    lt(trainingJobs.progressAt, opts.progressBefore),
  ];
  if (opts.deadWorkerPrefix) {
    conditions.push(
      and(
        sql`${trainingJobs.workerId} LIKE ${opts.deadWorkerPrefix.prefix + '%'}`,
        sql`${trainingJobs.workerId} NOT LIKE ${opts.deadWorkerPrefix.except + '%'}`,
      )!,
    );
  }
  return db
    .select()
    .from(trainingJobs)
    .where(and(eq(trainingJobs.status, 'RUNNING'), isNotNull(trainingJobs.workerId), or(...conditions)));
}

export async function countByStatus(db: DbOrTx) {
  const rows = await db
    .select({ status: trainingJobs.status, n: sql<number>`count(*)`.mapWith(Number) })
    .from(trainingJobs)
    .where(inArray(trainingJobs.status, ['QUEUED', 'RUNNING']))
    .groupBy(trainingJobs.status);
  return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Partial<Record<'QUEUED' | 'RUNNING', number>>;
}
