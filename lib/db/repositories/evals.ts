import 'server-only';
import { and, asc, desc, eq, gt, inArray, isNull, lt, max, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import {
  entities,
  evalExamples,
  evalResults,
  evalRunEvents,
  evalRuns,
  evalSets,
  models,
  projects,
  type AutoEvalSetting,
  type EvalScoreValue,
} from '../schema';
import { olderThan, seqRange } from './keyset';

/** The notification channel that wakes eval runners (payload: a run id); lib/services/eval-runner.ts listens. */
export const EVAL_RUNS_CHANNEL = 'eval_runs';

/** Eval sets, runs, results and events (docs/evals.md; lib/services/evals.ts and eval-runner.ts call these). */

export type EvalSetRow = typeof evalSets.$inferSelect;
export type EvalExampleRow = typeof evalExamples.$inferSelect;
export type EvalRunRow = typeof evalRuns.$inferSelect;
export type EvalResultRow = typeof evalResults.$inferSelect;
export type EvalEventRow = typeof evalRunEvents.$inferSelect;

export interface EvalSetWithEntity extends EvalSetRow {
  entityName: string;
}

const setWithEntity = {
  id: evalSets.id,
  entityId: evalSets.entityId,
  project: evalSets.project,
  name: evalSets.name,
  version: evalSets.version,
  numExamples: evalSets.numExamples,
  sha256: evalSets.sha256,
  createdBy: evalSets.createdBy,
  createdAt: evalSets.createdAt,
  entityName: entities.name,
};

/** Rows of eval_examples go in batches: a statement's parameters are capped at 65,535. */
const EXAMPLE_BATCH = 1000;

/**
 * Inserts the next version of (entity, project, name) with its examples, in one transaction; the unique index
 * arbitrates concurrent uploads of one name (the loser retries with the next version).
 */
export async function insertEvalSet(
  db: DbOrTx,
  input: {
    entityId: string;
    project: string;
    name: string;
    sha256: string;
    createdBy: string;
    examples: { messages: Record<string, unknown>[]; reference: unknown; metadata: Record<string, unknown> }[];
  },
): Promise<EvalSetRow> {
  for (let attempt = 0; ; attempt++) {
    const row = await db.transaction(async (tx) => {
      const [{ current }] = await tx
        .select({ current: max(evalSets.version) })
        .from(evalSets)
        .where(
          and(
            eq(evalSets.entityId, input.entityId),
            eq(evalSets.project, input.project),
            eq(evalSets.name, input.name),
          ),
        );
      const [set] = await tx
        .insert(evalSets)
        .values({
          entityId: input.entityId,
          project: input.project,
          name: input.name,
          version: current === null ? 1 : current + 1,
          numExamples: input.examples.length,
          sha256: input.sha256,
          createdBy: input.createdBy,
        })
        .onConflictDoNothing()
        .returning();
      if (!set) return undefined;
      for (let i = 0; i < input.examples.length; i += EXAMPLE_BATCH) {
        await tx.insert(evalExamples).values(
          input.examples.slice(i, i + EXAMPLE_BATCH).map((e, j) => ({
            setId: set.id,
            idx: i + j,
            messages: e.messages,
            reference: e.reference === undefined ? null : JSON.stringify(e.reference),
            metadata: e.metadata,
          })),
        );
      }
      return set;
    });
    if (row) return row;
    if (attempt >= 20) throw new Error('could not allocate an eval set version');
  }
}

export async function findEvalSetInScope(
  db: DbOrTx,
  id: string,
  entityIds: string[],
): Promise<EvalSetWithEntity | undefined> {
  if (entityIds.length === 0) return undefined;
  const [row] = await db
    .select(setWithEntity)
    .from(evalSets)
    .innerJoin(entities, eq(entities.id, evalSets.entityId))
    .where(and(eq(evalSets.id, id), inArray(evalSets.entityId, entityIds)));
  return row;
}

export async function listEvalSets(
  db: DbOrTx,
  f: {
    entityIds: string[];
    project?: string;
    name?: string;
    after?: { createdAt: Date; id: string };
    limit: number;
  },
): Promise<EvalSetWithEntity[]> {
  if (f.entityIds.length === 0) return [];
  const conditions: SQL[] = [inArray(evalSets.entityId, f.entityIds)];
  if (f.project !== undefined) conditions.push(eq(evalSets.project, f.project));
  if (f.name !== undefined) conditions.push(eq(evalSets.name, f.name));
  if (f.after) conditions.push(olderThan(evalSets.createdAt, evalSets.id, f.after));
  return db
    .select(setWithEntity)
    .from(evalSets)
    .innerJoin(entities, eq(entities.id, evalSets.entityId))
    .where(and(...conditions))
    .orderBy(desc(evalSets.createdAt), desc(evalSets.id))
    .limit(f.limit);
}

/** A page of a set's examples in file order, after the example `after` (-1: from the start). */
export async function pageExamples(db: DbOrTx, setId: string, after: number, limit: number) {
  return db
    .select()
    .from(evalExamples)
    .where(and(eq(evalExamples.setId, setId), gt(evalExamples.idx, after)))
    .orderBy(asc(evalExamples.idx))
    .limit(limit);
}

export async function examplesAt(db: DbOrTx, setId: string, idxs: number[]): Promise<EvalExampleRow[]> {
  if (idxs.length === 0) return [];
  return db
    .select()
    .from(evalExamples)
    .where(and(eq(evalExamples.setId, setId), inArray(evalExamples.idx, idxs)))
    .orderBy(asc(evalExamples.idx));
}

/** Deletes a set unless a QUEUED or RUNNING run uses it: 'busy' then. Its finished runs go with it (cascade). */
export async function deleteEvalSet(db: DbOrTx, id: string): Promise<'deleted' | 'busy' | 'missing'> {
  return db.transaction(async (tx) => {
    const [set] = await tx.select({ id: evalSets.id }).from(evalSets).where(eq(evalSets.id, id)).for('update');
    if (!set) return 'missing';
    // Run creation locks the set too (lockEvalSet), so no run can start using it between this check and the delete.
    const [open] = await tx
      .select({ id: evalRuns.id })
      .from(evalRuns)
      .where(and(eq(evalRuns.evalSetId, id), inArray(evalRuns.status, ['QUEUED', 'RUNNING'])))
      .limit(1);
    if (open) return 'busy';
    await tx.delete(evalSets).where(eq(evalSets.id, id));
    return 'deleted';
  });
}

/** Takes the set's row lock (shared with deleteEvalSet's); undefined when it was deleted meanwhile. */
export async function lockEvalSet(db: DbOrTx, id: string) {
  const [row] = await db.select().from(evalSets).where(eq(evalSets.id, id)).for('share');
  return row;
}

// ---------------------------------------------------------------------------------------------------------------
// Runs

export interface EvalRunWithSet extends EvalRunRow {
  setName: string;
  setVersion: number;
  setProject: string;
}

const runWithSet = {
  run: evalRuns,
  setName: evalSets.name,
  setVersion: evalSets.version,
  setProject: evalSets.project,
};

function flatten(r: { run: EvalRunRow; setName: string; setVersion: number; setProject: string }): EvalRunWithSet {
  return { ...r.run, setName: r.setName, setVersion: r.setVersion, setProject: r.setProject };
}

export async function insertEvalRun(db: DbOrTx, input: typeof evalRuns.$inferInsert): Promise<EvalRunRow> {
  const [row] = await db.insert(evalRuns).values(input).returning();
  return row;
}

export async function findEvalRunInScope(
  db: DbOrTx,
  id: string,
  entityIds: string[],
): Promise<EvalRunWithSet | undefined> {
  if (entityIds.length === 0) return undefined;
  const [row] = await db
    .select(runWithSet)
    .from(evalRuns)
    .innerJoin(evalSets, eq(evalSets.id, evalRuns.evalSetId))
    .where(and(eq(evalRuns.id, id), inArray(evalRuns.entityId, entityIds)));
  return row && flatten(row);
}

export async function findEvalRun(db: DbOrTx, id: string): Promise<EvalRunWithSet | undefined> {
  const [row] = await db
    .select(runWithSet)
    .from(evalRuns)
    .innerJoin(evalSets, eq(evalSets.id, evalRuns.evalSetId))
    .where(eq(evalRuns.id, id));
  return row && flatten(row);
}

export async function listEvalRuns(
  db: DbOrTx,
  f: {
    entityIds: string[];
    evalSetId?: string;
    modelId?: string;
    project?: string;
    after?: { createdAt: Date; id: string };
    limit: number;
  },
): Promise<EvalRunWithSet[]> {
  if (f.entityIds.length === 0) return [];
  const conditions: SQL[] = [inArray(evalRuns.entityId, f.entityIds)];
  if (f.evalSetId !== undefined) conditions.push(eq(evalRuns.evalSetId, f.evalSetId));
  if (f.project !== undefined) conditions.push(eq(evalSets.project, f.project));
  if (f.modelId !== undefined)
    conditions.push(sql`${evalRuns.targets} @> ${JSON.stringify([{ model_id: f.modelId }])}::jsonb`);
  if (f.after) conditions.push(olderThan(evalRuns.createdAt, evalRuns.id, f.after));
  const rows = await db
    .select(runWithSet)
    .from(evalRuns)
    .innerJoin(evalSets, eq(evalSets.id, evalRuns.evalSetId))
    .where(and(...conditions))
    .orderBy(desc(evalRuns.createdAt), desc(evalRuns.id))
    .limit(f.limit);
  return rows.map(flatten);
}

export async function updateEvalRun(
  db: DbOrTx,
  id: string,
  patch: Partial<typeof evalRuns.$inferInsert>,
  where?: { status?: EvalRunRow['status'][]; leaseOwner?: string },
): Promise<EvalRunRow | undefined> {
  const conditions: SQL[] = [eq(evalRuns.id, id)];
  if (where?.status) conditions.push(inArray(evalRuns.status, where.status));
  if (where?.leaseOwner) conditions.push(eq(evalRuns.leaseOwner, where.leaseOwner));
  const [row] = await db
    .update(evalRuns)
    .set(patch)
    .where(and(...conditions))
    .returning();
  return row;
}

/**
 * Claims the oldest open run nobody holds: QUEUED, or RUNNING with a lease that ran out (its server died), or, when
 * `takeOthers` (the embedded database: this process is the only server), RUNNING under another owner's lease. `FOR
 * UPDATE SKIP LOCKED` keeps two servers on one PostgreSQL from claiming the same run.
 */
export async function claimEvalRun(
  db: DbOrTx,
  owner: string,
  leaseMs: number,
  takeOthers: boolean,
): Promise<{ run: EvalRunRow; resumed: boolean } | undefined> {
  return db.transaction(async (tx) => {
    const free = takeOthers
      ? or(isNull(evalRuns.leaseOwner), sql`${evalRuns.leaseOwner} <> ${owner}`)!
      : or(isNull(evalRuns.leaseExpiresAt), lt(evalRuns.leaseExpiresAt, sql`now()`))!;
    const [candidate] = await tx
      .select({ id: evalRuns.id, status: evalRuns.status })
      .from(evalRuns)
      .where(and(sql`${evalRuns.status} in ('QUEUED', 'RUNNING')`, free))
      .orderBy(asc(evalRuns.createdAt))
      .limit(1)
      .for('update', { skipLocked: true });
    if (!candidate) return undefined;
    const [run] = await tx
      .update(evalRuns)
      .set({
        status: 'RUNNING',
        leaseOwner: owner,
        leaseExpiresAt: sql`now() + ${`${leaseMs} milliseconds`}::interval`,
        startedAt: sql`coalesce(${evalRuns.startedAt}, now())`,
      })
      .where(eq(evalRuns.id, candidate.id))
      .returning();
    return { run, resumed: candidate.status === 'RUNNING' };
  });
}

/** Extends the lease and records progress; the run's status now, or undefined when the lease is no longer ours. */
export async function renewEvalLease(db: DbOrTx, id: string, owner: string, leaseMs: number, done: number) {
  const [row] = await db
    .update(evalRuns)
    .set({ leaseExpiresAt: sql`now() + ${`${leaseMs} milliseconds`}::interval`, progressDone: done })
    .where(and(eq(evalRuns.id, id), eq(evalRuns.leaseOwner, owner), eq(evalRuns.status, 'RUNNING')))
    .returning({ status: evalRuns.status });
  return row?.status;
}

/**
 * Lets go of a run this owner holds, still RUNNING (a server that stops): any runner may claim it at once, rather than
 * after the lease would have run out. False when the run was not held by `owner` (finished, cancelled, taken over).
 */
export async function releaseEvalLease(db: DbOrTx, id: string, owner: string): Promise<boolean> {
  const rows = await db
    .update(evalRuns)
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(evalRuns.id, id), eq(evalRuns.leaseOwner, owner), eq(evalRuns.status, 'RUNNING')))
    .returning({ id: evalRuns.id });
  return rows.length > 0;
}

export async function openEvalRunCount(db: DbOrTx, setId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(evalRuns)
    .where(and(eq(evalRuns.evalSetId, setId), inArray(evalRuns.status, ['QUEUED', 'RUNNING'])));
  return row.n;
}

// ---------------------------------------------------------------------------------------------------------------
// Events

export async function insertEvalEvent(
  db: DbOrTx,
  runId: string,
  type: string,
  message: string,
  data: Record<string, unknown> = {},
) {
  await db.insert(evalRunEvents).values({ runId, type, message, data });
}

export async function pageEvalEvents(db: DbOrTx, runId: string, after: number, limit: number) {
  // A range of the (run_id, seq) index, as a job's events are read (repositories/keyset.ts seqRange).
  const range = seqRange([['run_id', sql`${runId}::uuid`]], { afterSeq: sql`${after}` });
  return db.select().from(evalRunEvents).where(range.where).orderBy(range.order).limit(limit);
}

export async function hasEvalEvent(db: DbOrTx, runId: string, type: string): Promise<boolean> {
  const [row] = await db
    .select({ seq: evalRunEvents.seq })
    .from(evalRunEvents)
    .where(and(eq(evalRunEvents.runId, runId), eq(evalRunEvents.type, type)))
    .limit(1);
  return row !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Results

/** Stores a generated sample; a sample stored already (a resumed run racing its old self) is kept as it was. */
export async function insertEvalResult(db: DbOrTx, row: typeof evalResults.$inferInsert): Promise<boolean> {
  const inserted = await db
    .insert(evalResults)
    .values(row)
    .onConflictDoNothing()
    .returning({ runId: evalResults.runId });
  return inserted.length > 0;
}

/** The samples of a run that hold an answer (or a generation error): what a resumed run skips. */
export async function generatedSamples(db: DbOrTx, runId: string) {
  return db
    .select({ exampleIdx: evalResults.exampleIdx, targetIdx: evalResults.targetIdx, sample: evalResults.sample })
    .from(evalResults)
    .where(
      and(
        eq(evalResults.runId, runId),
        or(sql`${evalResults.text} is not null`, sql`${evalResults.error} is not null`),
      ),
    );
}

export async function resultsOfExamples(db: DbOrTx, runId: string, idxs: number[]): Promise<EvalResultRow[]> {
  if (idxs.length === 0) return [];
  return db
    .select()
    .from(evalResults)
    .where(and(eq(evalResults.runId, runId), inArray(evalResults.exampleIdx, idxs)))
    .orderBy(asc(evalResults.exampleIdx), asc(evalResults.targetIdx), asc(evalResults.sample));
}

/** Adds (or replaces) one scorer's score on samples, creating rows for samples that have no answer stored. */
export async function mergeScores(
  db: DbOrTx,
  runId: string,
  rows: { exampleIdx: number; targetIdx: number; sample: number; scores: Record<string, EvalScoreValue> }[],
) {
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insert(evalResults)
      .values(rows.slice(i, i + 1000).map((r) => ({ runId, ...r })))
      .onConflictDoUpdate({
        target: [evalResults.runId, evalResults.exampleIdx, evalResults.targetIdx, evalResults.sample],
        set: { scores: sql`${evalResults.scores} || excluded.scores` },
      });
  }
}

/** Per target and scorer: the mean score, how many samples passed, and how many were scored. */
export async function summarizeEvalRun(db: DbOrTx, runId: string) {
  const result = (await db.execute(
    sql`select r.target_idx, s.key as scorer,
          avg((s.value->>'score')::float8)::float8 as mean,
          count(*) filter (where (s.value->>'passed')::boolean)::int as passed,
          count(*)::int as total
        from ${evalResults} r, jsonb_each(r.scores) s
        where r.run_id = ${runId}
        group by r.target_idx, s.key
        order by r.target_idx, s.key`,
  )) as { rows: { target_idx: unknown; scorer: string; mean: unknown; passed: unknown; total: unknown }[] };
  return result.rows.map((r) => ({
    targetIdx: Number(r.target_idx),
    scorer: r.scorer,
    mean: Number(r.mean),
    passed: Number(r.passed),
    total: Number(r.total),
  }));
}

/**
 * Examples after `after` (in index order) whose mean score over scorers and samples passed (≥ 0.5) at target `a`
 * and failed at `b` (regressed), the reverse (improved), or either (changed). An example without scores at one of
 * them is neither.
 */
export async function filteredExampleIdxs(
  db: DbOrTx,
  runId: string,
  f: { a: number; b: number; filter: 'regressed' | 'improved' | 'changed'; after: number; limit: number },
): Promise<number[]> {
  const passA = sql`((avg((s.value->>'score')::float8) filter (where r.target_idx = ${f.a})) >= 0.5)`;
  const passB = sql`((avg((s.value->>'score')::float8) filter (where r.target_idx = ${f.b})) >= 0.5)`;
  const condition =
    f.filter === 'regressed'
      ? sql`${passA} and not ${passB}`
      : f.filter === 'improved'
        ? sql`not ${passA} and ${passB}`
        : sql`${passA} <> ${passB}`;
  const result = (await db.execute(
    sql`select r.example_idx
        from ${evalResults} r, jsonb_each(r.scores) s
        where r.run_id = ${runId} and r.target_idx in (${f.a}, ${f.b}) and r.example_idx > ${f.after}
        group by r.example_idx
        having ${condition}
        order by r.example_idx
        limit ${f.limit}`,
  )) as { rows: { example_idx: unknown }[] };
  return result.rows.map((r) => Number(r.example_idx));
}

// ---------------------------------------------------------------------------------------------------------------
// Auto-eval

export async function setAutoEval(db: DbOrTx, modelId: string, value: AutoEvalSetting | null) {
  await db.update(models).set({ autoEval: value }).where(eq(models.id, modelId));
}

export async function getAutoEval(db: DbOrTx, modelId: string): Promise<AutoEvalSetting | null> {
  const [row] = await db.select({ autoEval: models.autoEval }).from(models).where(eq(models.id, modelId));
  return row?.autoEval ?? null;
}

/**
 * Queues the auto-eval run of a model's new checkpoint, in the transaction that created the checkpoint (the job
 * queue's completion, a Tinker sampler save), so that no checkpoint of an auto-evaluated model goes without its run
 * even if the server stops right after. Nothing when the model has no auto-eval, or its set was deleted. One run per
 * checkpoint (eval_runs_auto_key). Returns the run's id for the caller to wake the runner with.
 */
export async function queueAutoEvalRun(db: DbOrTx, modelId: string, step: number): Promise<string | null> {
  const [model] = await db
    .select({
      autoEval: models.autoEval,
      name: models.name,
      entityName: entities.name,
      projectName: projects.name,
    })
    .from(models)
    .innerJoin(entities, eq(entities.id, models.entityId))
    .innerJoin(projects, eq(projects.id, models.projectId))
    .where(eq(models.id, modelId));
  const setting = model?.autoEval;
  if (!setting) return null;
  const [set] = await db.select().from(evalSets).where(eq(evalSets.id, setting.eval_set_id));
  if (!set) return null;
  const [run] = await db
    .insert(evalRuns)
    .values({
      entityId: set.entityId,
      evalSetId: set.id,
      name: `auto: step ${step}`,
      targets: [
        { name: `${model.entityName}/${model.projectName}/${model.name}:step${step}`, model_id: modelId, step },
      ],
      scorers: setting.scorers,
      sampling: setting.sampling,
      n: setting.n,
      progressTotal: set.numExamples * setting.n,
      createdBy: setting.created_by,
      autoModelId: modelId,
      autoStep: step,
    })
    .onConflictDoNothing()
    .returning({ id: evalRuns.id });
  return run?.id ?? null;
}
