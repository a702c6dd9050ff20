import 'server-only';
import { and, asc, desc, eq, gt, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { entities, jobEvents, models, projects, trainingJobs, trajectoryGroups, type JobStatus } from '../schema';
import { isStorableStep } from './models';
import { inScope, inScopeValues, placeholders, placeholderValues, preparedQuery } from '../prepared';
import { cursorValues, olderThanCursor, seqRange } from './keyset';
import { jobRange } from './job-event-pages';

export type TrainingJobRow = typeof trainingJobs.$inferSelect;
export type JobEventRow = typeof jobEvents.$inferSelect;
export type TrajectoryGroupRow = typeof trajectoryGroups.$inferSelect;
export type EventType = JobEventRow['type'];

export async function insertJob(db: DbOrTx, input: typeof trainingJobs.$inferInsert): Promise<TrainingJobRow> {
  const [row] = await db.insert(trainingJobs).values(input).returning();
  return row;
}

export async function findJobInScope(db: DbOrTx, id: string, entityIds: string[]) {
  if (entityIds.length === 0) return undefined;
  // Every job route's scope check, and the whole of the job a client polls while it trains: built once per number
  // of entities (lib/db/prepared.ts).
  const query = preparedQuery(db, `jobs.inScope|${entityIds.length}`, () =>
    db
      .select()
      .from(trainingJobs)
      .where(inScope(trainingJobs.id, trainingJobs.entityId, entityIds.length))
      .limit(1)
      .prepare(''),
  );
  const [row] = await query.execute(inScopeValues(id, entityIds));
  return row;
}

/** A model's jobs, newest first, keyset-paged on (created_at, id). */
export async function listJobsOfModel(
  db: DbOrTx,
  modelId: string,
  opts: { status?: JobStatus; after?: { createdAt: Date; id: string }; limit: number },
) {
  // A model's jobs page, polled by the dashboard and by clients following a job: built once per shape.
  const query = preparedQuery(db, `jobs.ofModel|${Boolean(opts.status)}|${Boolean(opts.after)}`, () => {
    const conditions: SQL[] = [eq(trainingJobs.modelId, sql.placeholder('modelId'))];
    if (opts.status) conditions.push(eq(trainingJobs.status, sql.placeholder('status')));
    if (opts.after) conditions.push(olderThanCursor(trainingJobs.createdAt, trainingJobs.id));
    return db
      .select()
      .from(trainingJobs)
      .where(and(...conditions))
      .orderBy(desc(trainingJobs.createdAt), desc(trainingJobs.id))
      .limit(sql.placeholder('limit'))
      .prepare('');
  });
  return query.execute({
    modelId,
    status: opts.status,
    ...cursorValues(opts.after),
    limit: opts.limit,
  });
}

/** Jobs of several entities with their model's names; `active` lists RUNNING before QUEUED, oldest first. */
export async function listJobsOfEntities(
  db: DbOrTx,
  entityIds: string[],
  opts: {
    status?: JobStatus;
    active?: boolean;
    after?: { createdAt: Date; id: string };
    limit: number;
    modelId?: string;
    project?: string;
    kind?: 'rl' | 'sft';
    /** Case-insensitive text in the model's name, its project's name or the job's id. */
    search?: string;
  },
) {
  if (entityIds.length === 0) return [];
  // The Jobs page polls its active list every few seconds while jobs run: built once per shape (lib/db/prepared.ts).
  const filters = [opts.status, opts.modelId, opts.project, opts.kind, opts.search].map((f) => (f ? 1 : 0)).join('');
  const shape = `jobs.ofEntities|${entityIds.length}|${filters}|${Boolean(opts.active)}|${Boolean(opts.after)}`;
  const query = preparedQuery(db, shape, () => {
    const conditions: SQL[] = [inArray(trainingJobs.entityId, placeholders('entity', entityIds.length))];
    if (opts.status) conditions.push(eq(trainingJobs.status, sql.placeholder('status')));
    if (opts.modelId) conditions.push(eq(trainingJobs.modelId, sql.placeholder('modelId')));
    if (opts.project) conditions.push(eq(projects.name, sql.placeholder('project')));
    if (opts.kind) conditions.push(eq(trainingJobs.kind, sql.placeholder('kind')));
    if (opts.search) {
      const pattern = sql.placeholder('search');
      conditions.push(
        or(
          sql`${models.name} ilike ${pattern}`,
          sql`${projects.name} ilike ${pattern}`,
          sql`${trainingJobs.id}::text ilike ${pattern}`,
        )!,
      );
    }
    if (opts.active) conditions.push(inArray(trainingJobs.status, ['RUNNING', 'QUEUED']));
    if (opts.after) conditions.push(olderThanCursor(trainingJobs.createdAt, trainingJobs.id));
    return db
      .select({
        job: trainingJobs,
        model: { id: models.id, entity: entities.name, project: projects.name, name: models.name },
      })
      .from(trainingJobs)
      .innerJoin(models, eq(models.id, trainingJobs.modelId))
      .innerJoin(projects, eq(projects.id, models.projectId))
      .innerJoin(entities, eq(entities.id, models.entityId))
      .where(and(...conditions))
      .orderBy(
        ...(opts.active ? [sql`case when ${trainingJobs.status} = 'RUNNING' then 0 else 1 end`] : []),
        desc(trainingJobs.createdAt),
        desc(trainingJobs.id),
      )
      .limit(sql.placeholder('limit'))
      .prepare('');
  });
  return query.execute({
    ...placeholderValues('entity', entityIds),
    status: opts.status,
    modelId: opts.modelId,
    project: opts.project,
    kind: opts.kind,
    // LIKE's own wildcards in the text are matched as themselves.
    search: opts.search ? `%${opts.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined,
    ...cursorValues(opts.after),
    limit: opts.limit,
  });
}

export async function openJobsOfModel(db: DbOrTx, modelId: string) {
  return db
    .select()
    .from(trainingJobs)
    .where(and(eq(trainingJobs.modelId, modelId), inArray(trainingJobs.status, ['QUEUED', 'RUNNING'])));
}

export async function updateJob(db: DbOrTx, id: string, set: Partial<typeof trainingJobs.$inferInsert>) {
  await db.update(trainingJobs).set(set).where(eq(trainingJobs.id, id));
}

export async function insertEvent(db: DbOrTx, jobId: string, type: EventType, data: Record<string, unknown>) {
  const [row] = await db.insert(jobEvents).values({ jobId, type, data }).returning();
  return row;
}

export async function findEvent(db: DbOrTx, jobId: string, eventId: string) {
  const [row] = await db
    .select({ seq: jobEvents.seq })
    .from(jobEvents)
    .where(and(eq(jobEvents.jobId, jobId), eq(jobEvents.id, eventId)))
    .limit(1);
  return row;
}

/**
 * The data of each job's latest gradient_step (its speed fields, for the Jobs page): one index lookup per job
 * (job_events_job_type_seq_idx, newest first), whatever the jobs' lengths.
 */
export async function lastStepOfJobs(db: DbOrTx, jobIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  if (jobIds.length === 0) return new Map();
  const ids = sql.join(
    jobIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  // Both drivers answer raw queries with { rows }; the generic driver type does not say so.
  const result = (await db.execute(sql`
    select j.id as job_id, e.data from unnest(array[${ids}]) as j(id)
    cross join lateral (
      select data from ${jobEvents} where ${jobEvents.jobId} = j.id and ${jobEvents.type} = 'gradient_step'
      order by ${jobEvents.seq} desc limit 1
    ) e`)) as unknown as { rows: { job_id: string; data: Record<string, unknown> }[] };
  return new Map(result.rows.map((r) => [r.job_id, r.data]));
}

/** Chronological, strictly after `afterSeq`: a range of the job's index whatever the table holds (see jobRange). */
export async function listEvents(db: DbOrTx, jobId: string, opts: { afterSeq?: number; limit: number }) {
  const range = jobRange(sql`${jobId}::uuid`, {
    afterSeq: opts.afterSeq === undefined ? undefined : sql`${opts.afterSeq}::bigint`,
  });
  return db.select().from(jobEvents).where(range.where).orderBy(range.order).limit(opts.limit);
}

/**
 * A trajectory group row whose data is given as the UTF-8 bytes of the JSON to store (prepared off the request
 * thread, lib/body/prepared.ts).
 */
export type TrajectoryGroupInsert = Omit<typeof trajectoryGroups.$inferInsert, 'data'> & { dataJson: Uint8Array };

/** Rows and bytes per INSERT: bounded so that no statement nears parameter limits or holds the driver long. */
const GROUP_BATCH_ROWS = 200;
const GROUP_BATCH_BYTES = 8 * 1024 * 1024;

export async function insertTrajectoryGroups(db: DbOrTx, rows: TrajectoryGroupInsert[]) {
  const insert = (batch: TrajectoryGroupInsert[]) =>
    db.insert(trajectoryGroups).values(
      // The bytes go to the database as they are, never becoming a string here: node-postgres sends a Buffer
      // parameter in binary format, and json's binary format is its UTF-8 text (PostgreSQL's json_recv), which
      // the column stores verbatim.
      batch.map(({ dataJson, ...row }) => ({
        ...row,
        data: sql`${Buffer.from(dataJson.buffer, dataJson.byteOffset, dataJson.byteLength)}::json`,
      })),
    );
  let batch: TrajectoryGroupInsert[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (batch.length > 0 && (batch.length >= GROUP_BATCH_ROWS || bytes + row.dataJson.byteLength > GROUP_BATCH_BYTES)) {
      await insert(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(row);
    bytes += row.dataJson.byteLength;
  }
  if (batch.length > 0) await insert(batch);
}

interface TrajectoryGroupFilter {
  step?: number;
  split?: string;
  source?: 'log' | 'train';
  afterSeq?: number;
  limit: number;
}

export async function listTrajectoryGroups(db: DbOrTx, modelId: string, opts: TrajectoryGroupFilter) {
  if (opts.step !== undefined && !isStorableStep(opts.step)) return [];
  return trajectoryGroupsQuery(db, modelId, opts);
}

/** listTrajectoryGroups' query, not yet run (the tests explain it). */
export function trajectoryGroupsQuery(db: DbOrTx, modelId: string, opts: TrajectoryGroupFilter) {
  const conditions: SQL[] = [];
  let order: SQL;
  if (opts.step !== undefined) {
    // One step's groups are few: trajectory_groups_model_step_idx finds them, and sorting them costs nothing.
    conditions.push(eq(trajectoryGroups.modelId, modelId), eq(trajectoryGroups.step, opts.step));
    if (opts.afterSeq !== undefined) conditions.push(gt(trajectoryGroups.seq, opts.afterSeq));
    order = sql`seq`;
  } else {
    const range = seqRange([['model_id', sql`${modelId}::uuid`]], {
      afterSeq: opts.afterSeq === undefined ? undefined : sql`${opts.afterSeq}::bigint`,
    });
    conditions.push(range.where);
    order = range.order;
  }
  if (opts.split !== undefined) conditions.push(eq(trajectoryGroups.split, opts.split));
  if (opts.source !== undefined) conditions.push(eq(trajectoryGroups.source, opts.source));
  return db
    .select()
    .from(trajectoryGroups)
    .where(and(...conditions))
    .orderBy(order)
    .limit(opts.limit);
}

export async function findTrajectoryGroupSeq(db: DbOrTx, modelId: string, id: string) {
  const [row] = await db
    .select({ seq: trajectoryGroups.seq })
    .from(trajectoryGroups)
    .where(and(eq(trajectoryGroups.modelId, modelId), eq(trajectoryGroups.id, id)))
    .limit(1);
  return row;
}

export async function listGroupsOfJob(db: DbOrTx, jobId: string) {
  return db
    .select()
    .from(trajectoryGroups)
    .where(eq(trajectoryGroups.jobId, jobId))
    .orderBy(asc(trajectoryGroups.groupIndex));
}

/** The model's jobs that took a gradient step, in training-curve order, with what segmentsOf needs. */
export async function jobsOnTrainingCurve(db: DbOrTx, modelId: string) {
  const rows = await db
    .select({
      id: trainingJobs.id,
      kind: trainingJobs.kind,
      status: trainingJobs.status,
      firstGradientX: trainingJobs.firstGradientX,
      completedSteps: trainingJobs.completedSteps,
      resultStep: trainingJobs.resultStep,
    })
    .from(trainingJobs)
    .where(and(eq(trainingJobs.modelId, modelId), sql`${trainingJobs.firstGradientX} is not null`))
    .orderBy(asc(trainingJobs.firstGradientX));
  return rows.map((r) => ({ ...r, firstGradientX: r.firstGradientX! }));
}

/** Every job of these models, oldest first (the run comparison's table: a few jobs per model). */
export async function jobsOfModels(db: DbOrTx, modelIds: string[]) {
  if (modelIds.length === 0) return [];
  return db
    .select()
    .from(trainingJobs)
    .where(inArray(trainingJobs.modelId, modelIds))
    .orderBy(asc(trainingJobs.createdAt), asc(trainingJobs.id));
}

/**
 * The latest completed SFT jobs on a base model that took at least one gradient step: who trained each, when it
 * started and finished, and when its first and last gradient_step arrived (the SFT form's time estimate reads them).
 */
export async function recentSftTimings(db: DbOrTx, baseModel: string, limit: number) {
  const stepTimes = db
    .select({
      jobId: jobEvents.jobId,
      firstStepAt: sql<string>`min(${jobEvents.createdAt})`.as('first_step_at'),
      lastStepAt: sql<string>`max(${jobEvents.createdAt})`.as('last_step_at'),
    })
    .from(jobEvents)
    .where(eq(jobEvents.type, 'gradient_step'))
    .groupBy(jobEvents.jobId)
    .as('step_times');
  const recent = db
    .select({ id: trainingJobs.id })
    .from(trainingJobs)
    .innerJoin(models, eq(models.id, trainingJobs.modelId))
    .where(
      and(
        eq(trainingJobs.kind, 'sft'),
        eq(trainingJobs.status, 'COMPLETED'),
        eq(models.baseModel, baseModel),
        gt(trainingJobs.completedSteps, 0),
      ),
    )
    .orderBy(desc(trainingJobs.finishedAt))
    .limit(limit)
    .as('recent');
  return db
    .select({
      workerId: trainingJobs.workerId,
      steps: trainingJobs.completedSteps,
      startedAt: trainingJobs.startedAt,
      finishedAt: trainingJobs.finishedAt,
      firstStepAt: stepTimes.firstStepAt,
      lastStepAt: stepTimes.lastStepAt,
    })
    .from(recent)
    .innerJoin(trainingJobs, eq(trainingJobs.id, recent.id))
    .innerJoin(stepTimes, eq(stepTimes.jobId, recent.id))
    .orderBy(desc(trainingJobs.finishedAt));
}
