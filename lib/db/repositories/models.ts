import 'server-only';
import { and, asc, count, desc, eq, gt, ilike, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { PgSelect } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../client';
import { checkpoints, entities, models, projects, runs } from '../schema';
import { modelStatsFields, type BestMetricChoice, type ModelListStats } from './best-metrics';
import { inScope, inScopeValues, placeholders, placeholderValues, preparedQuery } from '../prepared';
import { cursorValues, olderThanCursor } from './keyset';

export type ModelRow = typeof models.$inferSelect;
export type CheckpointRow = typeof checkpoints.$inferSelect;

/** A model with the names of its entity and project, the shape every model read needs. */
export interface ModelWithNames extends ModelRow {
  entityName: string;
  projectName: string;
}

const modelWithNames = {
  id: models.id,
  entityId: models.entityId,
  projectId: models.projectId,
  name: models.name,
  baseModel: models.baseModel,
  runId: models.runId,
  lastStep: models.lastStep,
  createdAt: models.createdAt,
  entityName: entities.name,
  projectName: projects.name,
};

export async function findOrCreateProject(db: DbOrTx, entityId: string, name: string) {
  await db.insert(projects).values({ entityId, name }).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.entityId, entityId), eq(projects.name, name)))
    .limit(1);
  return row;
}

export async function findModelByName(db: DbOrTx, entityId: string, project: string, name: string) {
  const [row] = await db
    .select(modelWithNames)
    .from(models)
    .innerJoin(entities, eq(entities.id, models.entityId))
    .innerJoin(projects, eq(projects.id, models.projectId))
    .where(and(eq(models.entityId, entityId), eq(projects.name, project), eq(models.name, name)))
    .limit(1);
  return row as ModelWithNames | undefined;
}

/** A select from `models` narrowed to the model `id` among `entityCount` entities, joined to its names (inScope). */
function modelInScope<T extends PgSelect>(query: T, entityCount: number) {
  return query
    .innerJoin(entities, eq(entities.id, models.entityId))
    .innerJoin(projects, eq(projects.id, models.projectId))
    .where(inScope(models.id, models.entityId, entityCount))
    .limit(1);
}

/** A model with its names and its checkpoints' summary (latest step, count, best metric), as lists show it. */
export type ModelSummaryRow = ModelWithNames & ModelListStats;

/**
 * One model the caller may see, with its checkpoints' summary, in one query. The model page polls it: built once
 * per shape, as the list is (Drizzle took longer to write out its subqueries than the database to run them).
 */
export async function findModelSummaryInScope(
  db: DbOrTx,
  id: string,
  entityIds: string[],
  best: BestMetricChoice = {},
): Promise<ModelSummaryRow | undefined> {
  if (entityIds.length === 0) return undefined;
  const shape = JSON.stringify(['models.summary', entityIds.length, best.metric ?? null, best.direction ?? null]);
  const { query, parseBest } = preparedQuery(db, shape, () => {
    const stats = modelStatsFields(models.id, best);
    return {
      parseBest: stats.parseBest,
      query: modelInScope(
        db
          .select({ ...modelWithNames, ...stats.fields })
          .from(models)
          .$dynamic(),
        entityIds.length,
      ).prepare(''),
    };
  });
  const [row] = await query.execute(inScopeValues(id, entityIds));
  return row && withStats(row, parseBest);
}

function withStats<T extends { latestStep: number | null; checkpointCount: number; bestMetric: unknown }>(
  row: T,
  parseBest: (raw: unknown) => ModelListStats['best'],
): ModelSummaryRow {
  // Added to the row the driver made rather than copied out of it: V8 made each rest-and-spread copy about 1.4 KiB
  // (a sixth of what a page of 20 models allocated, in a heap profile of the list route). The raw fields stay on
  // the row, unread.
  const out = row as unknown as ModelSummaryRow;
  out.latest = row.latestStep;
  out.count = row.checkpointCount;
  out.best = parseBest(row.bestMetric);
  return out;
}

/** A model visible to the caller: outside `entityIds` it does not exist (docs/contract.md §1.3: 404, never 403). */
export async function findModelInScope(db: DbOrTx, id: string, entityIds: string[]) {
  if (entityIds.length === 0) return undefined;
  // Every model route's scope check: built once per number of entities (lib/db/prepared.ts).
  const query = preparedQuery(db, `models.inScope|${entityIds.length}`, () =>
    modelInScope(db.select(modelWithNames).from(models).$dynamic(), entityIds.length).prepare(''),
  );
  const [row] = await query.execute(inScopeValues(id, entityIds));
  return row as ModelWithNames | undefined;
}

/** Which of these models lie in `entityIds` (ids only). */
export async function findModelsInScope(
  db: DbOrTx,
  ids: string[],
  entityIds: string[],
): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0 || entityIds.length === 0) return [];
  return db
    .select({ id: models.id, name: models.name })
    .from(models)
    .where(and(inArray(models.id, ids), inArray(models.entityId, entityIds)));
}

/** Locks the model row so concurrent step allocations and deletions serialise. */
export async function lockModel(db: DbOrTx, id: string): Promise<ModelRow | undefined> {
  const [row] = await db.select().from(models).where(eq(models.id, id)).for('update').limit(1);
  return row;
}

/** The id of a model's `gradient_steps` run (schema.ts `runs`): derived, so the append path needs no lookup. */
export const gradientRunId = (modelId: string) => `${modelId}:gradient-steps`;

/**
 * Reserves the next `n` x positions of the model's training curve (creating its gradient_steps run on first use)
 * and answers the x just before them; undefined when the model is gone. The row update serialises writers.
 */
export async function advanceGradientSteps(db: DbOrTx, modelId: string, n: number): Promise<number | undefined> {
  const [row] = await db
    .update(models)
    .set({ gradientSteps: sql`${models.gradientSteps} + ${n}` })
    .where(eq(models.id, modelId))
    .returning({ gradientSteps: models.gradientSteps });
  if (!row) return undefined;
  const before = row.gradientSteps - n;
  if (before === 0) {
    await db
      .insert(runs)
      .values({ id: gradientRunId(modelId), modelId, kind: 'gradient_steps' })
      .onConflictDoNothing();
  }
  return before;
}

export async function insertModel(
  db: DbOrTx,
  input: { entityId: string; projectId: string; name: string; baseModel: string; runId: string },
) {
  const [model] = await db
    .insert(models)
    .values({ ...input, lastStep: 0, checkpointCount: 1 })
    .returning();
  await db.insert(runs).values({ id: input.runId, modelId: model.id });
  await db.insert(checkpoints).values({ modelId: model.id, step: 0, metrics: {} });
  return model;
}

/**
 * Creates the model with its project (when new), run and step-0 checkpoint in one statement: data-modifying CTEs
 * are atomic like a transaction, at one round trip instead of seven. Answers the new model's id, or null when
 * the name is taken (the caller reads the existing model). The project upsert's no-op update is what makes
 * RETURNING give the id of a project that already exists, even one another session created a moment ago.
 */
export async function createModelRows(
  db: DbOrTx,
  input: { entityId: string; project: string; name: string; baseModel: string; runId: string },
): Promise<string | null> {
  const result = (await db.execute(sql`
    with p as (
      insert into ${projects} (entity_id, name) values (${input.entityId}, ${input.project})
      on conflict (entity_id, name) do update set name = excluded.name
      returning id
    ), m as (
      insert into ${models} (entity_id, project_id, name, base_model, run_id, last_step, checkpoint_count)
      select ${input.entityId}, p.id, ${input.name}, ${input.baseModel}, ${input.runId}, 0, 1 from p
      on conflict (project_id, name) do nothing
      returning id
    ), r as (
      insert into ${runs} (id, model_id) select ${input.runId}, m.id from m
    ), c as (
      insert into ${checkpoints} (model_id, step, metrics) select m.id, 0, '{}'::jsonb from m
    )
    select id from m
  `)) as unknown as { rows: { id: string }[] };
  return result.rows[0]?.id ?? null;
}

export async function deleteModelRow(db: DbOrTx, id: string): Promise<{ checkpoints: number; runs: number }> {
  const [{ n: checkpointCount }] = await db.select({ n: count() }).from(checkpoints).where(eq(checkpoints.modelId, id));
  const [{ n: runCount }] = await db.select({ n: count() }).from(runs).where(eq(runs.modelId, id));
  await db.delete(models).where(eq(models.id, id));
  return { checkpoints: Number(checkpointCount), runs: Number(runCount) };
}

export interface ModelListFilter {
  entityIds: string[];
  project?: string;
  baseModel?: string;
  search?: string;
  after?: { createdAt: Date; id: string };
  limit: number;
  /** Which metric ranks each model's best checkpoint (default: DEFAULT_BEST_METRICS). */
  best?: BestMetricChoice;
}

/** Newest first, keyset-paged on (created_at, id), each with its checkpoints' summary. */
export async function listModels(db: DbOrTx, f: ModelListFilter) {
  if (f.entityIds.length === 0) return [];
  // The route clients and the dashboard poll: its text (three subqueries per candidate metric) is built once
  // per shape (lib/db/prepared.ts).
  const shape = JSON.stringify([
    'models.list',
    f.entityIds.length,
    f.project !== undefined,
    f.baseModel !== undefined,
    Boolean(f.search),
    Boolean(f.after),
    f.best?.metric ?? null,
    f.best?.direction ?? null,
  ]);
  const { query, parseBest } = preparedQuery(db, shape, () => {
    const conditions: SQL[] = [inArray(models.entityId, placeholders('entity', f.entityIds.length))];
    if (f.project !== undefined) conditions.push(eq(projects.name, sql.placeholder('project')));
    if (f.baseModel !== undefined) conditions.push(eq(models.baseModel, sql.placeholder('baseModel')));
    if (f.search) conditions.push(ilike(models.name, sql.placeholder('search')));
    if (f.after) conditions.push(olderThanCursor(models.createdAt, models.id));
    const stats = modelStatsFields(models.id, f.best);
    return {
      parseBest: stats.parseBest,
      query: db
        .select({ ...modelWithNames, ...stats.fields })
        .from(models)
        .innerJoin(entities, eq(entities.id, models.entityId))
        .innerJoin(projects, eq(projects.id, models.projectId))
        .where(and(...conditions))
        .orderBy(desc(models.createdAt), desc(models.id))
        .limit(sql.placeholder('limit'))
        .prepare(''),
    };
  });
  const rows = await query.execute({
    ...placeholderValues('entity', f.entityIds),
    project: f.project,
    baseModel: f.baseModel,
    search: f.search && `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
    ...cursorValues(f.after),
    limit: f.limit,
  });
  return rows.map((row) => withStats(row, parseBest));
}

export async function listProjects(db: DbOrTx, entityIds: string[]) {
  if (entityIds.length === 0) return [];
  return db
    .select({
      id: projects.id,
      entityName: entities.name,
      name: projects.name,
      createdAt: projects.createdAt,
      modelCount: sql<number>`(select count(*) from ${models} where ${models.projectId} = ${projects.id})`.mapWith(
        Number,
      ),
    })
    .from(projects)
    .innerJoin(entities, eq(entities.id, projects.entityId))
    .where(inArray(projects.entityId, entityIds))
    .orderBy(asc(entities.name), asc(projects.name));
}

export async function findCheckpoint(db: DbOrTx, modelId: string, id: string) {
  const [row] = await db
    .select()
    .from(checkpoints)
    .where(and(eq(checkpoints.modelId, modelId), eq(checkpoints.id, id)))
    .limit(1);
  return row;
}

/** The model a checkpoint belongs to, with its names: for callers that hold the checkpoint's id alone (the Tinker sampler). */
export async function findCheckpointModel(db: DbOrTx, checkpointId: string): Promise<ModelWithNames | undefined> {
  const [row] = await db
    .select(modelWithNames)
    .from(checkpoints)
    .innerJoin(models, eq(models.id, checkpoints.modelId))
    .innerJoin(entities, eq(entities.id, models.entityId))
    .innerJoin(projects, eq(projects.id, models.projectId))
    .where(eq(checkpoints.id, checkpointId))
    .limit(1);
  return row as ModelWithNames | undefined;
}

/**
 * Steps live in an int4 column. A number outside it cannot match any row, and Postgres would reject the
 * whole query (a 500), so callers filter with this instead of sending it.
 */
export function isStorableStep(step: number): boolean {
  return Number.isInteger(step) && step >= -2_147_483_648 && step <= 2_147_483_647;
}

export async function findCheckpointByStep(db: DbOrTx, modelId: string, step: number) {
  if (!isStorableStep(step)) return undefined;
  const [row] = await db
    .select()
    .from(checkpoints)
    .where(and(eq(checkpoints.modelId, modelId), eq(checkpoints.step, step)))
    .limit(1);
  return row;
}

export async function latestCheckpoint(db: DbOrTx, modelId: string) {
  const [row] = await db
    .select()
    .from(checkpoints)
    .where(eq(checkpoints.modelId, modelId))
    .orderBy(desc(checkpoints.step))
    .limit(1);
  return row;
}

/**
 * The checkpoint a job trains from (docs/contract.md §2.7): the latest, none for the base model (null), or a named
 * step ('missing' when the model has no checkpoint there). The job's acceptance and its claim both ask this.
 */
export async function startingCheckpoint(db: DbOrTx, modelId: string, from: unknown) {
  if (from === 'base') return null;
  if (typeof from === 'number') return (await findCheckpointByStep(db, modelId, from)) ?? 'missing';
  return (await latestCheckpoint(db, modelId)) ?? null;
}

/**
 * A model named in a chat request, by id or by entity, project and name. Not limited to the caller's entities: the
 * answer is cached for every caller (lib/services/chat-models.ts checks the entity).
 */
export type ModelMatch = { id: string } | { entityId: string; project: string; name: string };

/**
 * A model and the checkpoint that serves it (the latest, or a given step; null when it has none there), in one
 * query built once per shape (lib/db/prepared.ts): a chat request for a trained model asks this whenever the
 * cache of served models misses. Two queries built on every request cost a relayed request 4.6-6.4 ms of server
 * CPU, against 3.5-4.4 with this one (bench:gateway's stand-in, 1 stream). The checkpoint is one probe of the
 * (model, step) index however many the model has.
 */
export async function findModelCheckpoint(
  db: DbOrTx,
  match: ModelMatch,
  version: 'latest' | { step: number },
): Promise<
  { model: ModelWithNames; checkpoint: Pick<CheckpointRow, 'id' | 'step' | 'artifactKey'> | null } | undefined
> {
  const byId = 'id' in match;
  if (version !== 'latest' && !isStorableStep(version.step)) return undefined;
  const shape = `models.checkpoint|${byId ? 'id' : 'name'}|${version === 'latest' ? 'latest' : 'step'}`;
  const query = preparedQuery(db, shape, () => {
    const served = db
      .select({ id: checkpoints.id, step: checkpoints.step, artifactKey: checkpoints.artifactKey })
      .from(checkpoints)
      .where(
        and(
          eq(checkpoints.modelId, models.id),
          version === 'latest' ? undefined : eq(checkpoints.step, sql.placeholder('step')),
        ),
      )
      .orderBy(desc(checkpoints.step))
      .limit(1)
      .as('served');
    return db
      .select({
        ...modelWithNames,
        checkpointId: served.id,
        checkpointStep: served.step,
        artifactKey: served.artifactKey,
      })
      .from(models)
      .innerJoin(entities, eq(entities.id, models.entityId))
      .innerJoin(projects, eq(projects.id, models.projectId))
      .leftJoinLateral(served, sql`true`)
      .where(
        byId
          ? eq(models.id, sql.placeholder('id'))
          : and(
              eq(models.entityId, sql.placeholder('entityId')),
              eq(projects.name, sql.placeholder('project')),
              eq(models.name, sql.placeholder('name')),
            ),
      )
      .limit(1)
      .prepare('');
  });
  const [row] = await query.execute({
    ...(byId ? { id: match.id } : { entityId: match.entityId, project: match.project, name: match.name }),
    ...(version === 'latest' ? {} : { step: version.step }),
  });
  if (!row) return undefined;
  const { checkpointId, checkpointStep, artifactKey, ...model } = row;
  return {
    model: model as ModelWithNames,
    checkpoint: checkpointId === null ? null : { id: checkpointId, step: checkpointStep as number, artifactKey },
  };
}

/** Keyset page by step: `afterStep` excludes itself, in the requested direction. */
export async function listCheckpoints(
  db: DbOrTx,
  modelId: string,
  opts: { order: 'asc' | 'desc'; afterStep?: number; limit: number },
) {
  const conditions: SQL[] = [eq(checkpoints.modelId, modelId)];
  if (opts.afterStep !== undefined) {
    conditions.push(opts.order === 'asc' ? gt(checkpoints.step, opts.afterStep) : lt(checkpoints.step, opts.afterStep));
  }
  return db
    .select()
    .from(checkpoints)
    .where(and(...conditions))
    .orderBy(opts.order === 'asc' ? asc(checkpoints.step) : desc(checkpoints.step))
    .limit(opts.limit);
}

export async function deleteCheckpointsBySteps(db: DbOrTx, modelId: string, steps: number[]) {
  const storable = steps.filter(isStorableStep);
  if (storable.length === 0) return [];
  return db.transaction(async (tx) => {
    const deleted = await tx
      .delete(checkpoints)
      .where(and(eq(checkpoints.modelId, modelId), inArray(checkpoints.step, storable)))
      .returning({ step: checkpoints.step, artifactKey: checkpoints.artifactKey });
    if (deleted.length > 0) {
      await tx
        .update(models)
        .set({ checkpointCount: sql`${models.checkpointCount} - ${deleted.length}` })
        .where(eq(models.id, modelId));
    }
    return deleted;
  });
}

/** Merges metrics into a checkpoint; a key written again overwrites the old value (docs/contract.md §2.5). */
export async function mergeCheckpointMetrics(db: DbOrTx, checkpointId: string, metrics: Record<string, number>) {
  await db
    .update(checkpoints)
    .set({ metrics: sql`${checkpoints.metrics} || ${JSON.stringify(metrics)}::jsonb` })
    .where(eq(checkpoints.id, checkpointId));
}

/** Adds a checkpoint, and moves its model's checkpoint_count and last_step with it, atomically. */
export async function insertCheckpoint(
  db: DbOrTx,
  input: { modelId: string; step: number; metrics: Record<string, number>; artifactKey: string | null },
) {
  return db.transaction(async (tx) => {
    const rows = await tx.insert(checkpoints).values(input).returning();
    // The model's bookkeeping moves with it, in one update: one more checkpoint, and the highest step ever created.
    await tx
      .update(models)
      .set({
        checkpointCount: sql`${models.checkpointCount} + ${rows.length}`,
        lastStep: sql`greatest(${models.lastStep}, ${input.step})`,
      })
      .where(eq(models.id, input.modelId));
    return rows;
  });
}

export async function findModelById(db: DbOrTx, id: string): Promise<ModelRow | undefined> {
  const [row] = await db.select().from(models).where(eq(models.id, id)).limit(1);
  return row;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type ScopedCheckpointPage =
  { kind: 'no_model' } | { kind: 'unknown_cursor' } | { kind: 'page'; rows: CheckpointRow[] };

/**
 * A page of a model's checkpoints by step in one query: the model's scope check, the cursor's step and the
 * page together. The model row is always returned (checkpoint columns null on an empty page), so "no such model"
 * and "no checkpoints" stay apart.
 */
export async function pageCheckpointsInScope(
  db: DbOrTx,
  input: { modelId: string; entityIds: string[]; afterId?: string; order: 'asc' | 'desc'; limit: number },
): Promise<ScopedCheckpointPage> {
  if (input.entityIds.length === 0 || !UUID.test(input.modelId)) return { kind: 'no_model' };
  const after = input.afterId ?? null;
  if (after !== null && !UUID.test(after)) {
    const exists = await pageCheckpointsInScope(db, { ...input, afterId: undefined, limit: 0 });
    return exists.kind === 'no_model' ? exists : { kind: 'unknown_cursor' };
  }
  const scope = sql.join(
    input.entityIds.map((id) => sql`${id}::uuid`),
    sql`, `,
  );
  const ascending = input.order === 'asc';
  // With and without a cursor as two statement texts, for the reason given in pageEventsInScope.
  const cursor =
    after === null
      ? { found: sql`true`, join: sql``, bound: sql`` }
      : {
          found: sql`(c.step is not null)`,
          join: sql`left join lateral (select step from checkpoints where model_id = m.id and id = ${after}::uuid) c on true`,
          bound: ascending ? sql`and step > c.step` : sql`and step < c.step`,
        };
  const result = (await db.execute(sql`
    select ${cursor.found} as cursor_found, p.id, p.model_id, p.step, p.metrics, p.artifact_key, p.created_at
    from models m
    ${cursor.join}
    left join lateral (
      select * from checkpoints
      where model_id = m.id ${cursor.bound}
      order by step ${ascending ? sql`asc` : sql`desc`}
      limit ${input.limit}
    ) p on true
    where m.id = ${input.modelId}::uuid and m.entity_id in (${scope})`)) as { rows: Record<string, unknown>[] };
  if (result.rows.length === 0) return { kind: 'no_model' };
  if (after !== null && !result.rows[0].cursor_found) return { kind: 'unknown_cursor' };
  return {
    kind: 'page',
    rows: result.rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: r.id as string,
        modelId: r.model_id as string,
        step: Number(r.step),
        metrics: (typeof r.metrics === 'string' ? JSON.parse(r.metrics) : r.metrics) as Record<string, number>,
        artifactKey: (r.artifact_key as string | null) ?? null,
        // The driver hands timestamps over as text; Drizzle's own columns parse them the same way.
        createdAt: new Date(r.created_at as string),
      })),
  };
}
