import 'server-only';
import { and, desc, eq, getTableColumns, gt, inArray, isNull, lt, ne, or, sql, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../client';
import {
  entities,
  models,
  projects,
  tinkerArchiveLinks,
  tinkerRequests,
  tinkerSamplingSessions,
  tinkerSessions,
  tinkerTrainingClients,
  tinkerWeights,
  trainingWorkers,
  type TinkerRequestKind,
} from '../schema';

/** The rows of the Tinker API's tables (docs/tinker.md): sessions, training clients, futures, saved weights. */
export type TinkerSessionRow = typeof tinkerSessions.$inferSelect;
export type TrainingClientRow = typeof tinkerTrainingClients.$inferSelect;
export type TinkerRequestRow = typeof tinkerRequests.$inferSelect;
export type SamplingSessionRow = typeof tinkerSamplingSessions.$inferSelect;
export type TinkerWeightsRow = typeof tinkerWeights.$inferSelect;

// ---------------------------------------------------------------------------------------------------------------
// Sessions

export async function insertSession(db: DbOrTx, input: typeof tinkerSessions.$inferInsert): Promise<TinkerSessionRow> {
  const [row] = await db.insert(tinkerSessions).values(input).returning();
  return row;
}

export async function findSession(db: DbOrTx, id: string): Promise<TinkerSessionRow | undefined> {
  const [row] = await db.select().from(tinkerSessions).where(eq(tinkerSessions.id, id)).limit(1);
  return row;
}

/** Records a heartbeat; false when the session does not exist or has ended. */
export async function touchSession(db: DbOrTx, id: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(tinkerSessions)
    .set({ heartbeatAt: now })
    .where(and(eq(tinkerSessions.id, id), isNull(tinkerSessions.endedAt)))
    .returning({ id: tinkerSessions.id });
  return rows.length > 0;
}

/** Ends the open sessions not heard from since `before` and answers their ids. */
export async function endSilentSessions(db: DbOrTx, before: Date, now: Date): Promise<string[]> {
  const rows = await db
    .update(tinkerSessions)
    .set({ endedAt: now })
    .where(and(isNull(tinkerSessions.endedAt), lt(tinkerSessions.heartbeatAt, before)))
    .returning({ id: tinkerSessions.id });
  return rows.map((r) => r.id);
}

export async function findProject(db: DbOrTx, id: string): Promise<{ id: string; name: string } | undefined> {
  const [row] = await db.select({ id: projects.id, name: projects.name }).from(projects).where(eq(projects.id, id));
  return row;
}

// ---------------------------------------------------------------------------------------------------------------
// Training clients

export async function insertTrainingClient(db: DbOrTx, input: typeof tinkerTrainingClients.$inferInsert) {
  await db.insert(tinkerTrainingClients).values(input);
}

/** A training client with what its answers need: its model's names and entity. */
export interface TrainingClientWithModel extends TrainingClientRow {
  entityId: string;
  entityName: string;
  projectName: string;
  modelName: string;
  runId: string;
  lastStep: number;
}

const clientWithModelColumns = {
  client: tinkerTrainingClients,
  entityId: models.entityId,
  entityName: entities.name,
  projectName: projects.name,
  modelName: models.name,
  runId: models.runId,
  lastStep: models.lastStep,
};

function flatten(row: {
  client: TrainingClientRow;
  entityId: string;
  entityName: string;
  projectName: string;
  modelName: string;
  runId: string;
  lastStep: number;
}): TrainingClientWithModel {
  const { client, ...rest } = row;
  return { ...client, ...rest };
}

/** Training clients joined to their model's names (the joins every reader with names needs). */
function clientsWithModel(db: DbOrTx) {
  return db
    .select(clientWithModelColumns)
    .from(tinkerTrainingClients)
    .innerJoin(models, eq(models.id, tinkerTrainingClients.modelId))
    .innerJoin(entities, eq(entities.id, models.entityId))
    .innerJoin(projects, eq(projects.id, models.projectId));
}

export async function findTrainingClient(db: DbOrTx, modelId: string): Promise<TrainingClientWithModel | undefined> {
  const [row] = await clientsWithModel(db).where(eq(tinkerTrainingClients.modelId, modelId)).limit(1);
  return row ? flatten(row) : undefined;
}

export async function findTrainingClientBySessionSeq(
  db: DbOrTx,
  sessionId: string,
  modelSeqId: number,
): Promise<TrainingClientRow | undefined> {
  const [row] = await db
    .select()
    .from(tinkerTrainingClients)
    .where(and(eq(tinkerTrainingClients.sessionId, sessionId), eq(tinkerTrainingClients.modelSeqId, modelSeqId)))
    .limit(1);
  return row;
}

export async function lockTrainingClient(db: DbOrTx, modelId: string): Promise<TrainingClientRow | undefined> {
  const [row] = await db
    .select()
    .from(tinkerTrainingClients)
    .where(eq(tinkerTrainingClients.modelId, modelId))
    .for('update')
    .limit(1);
  return row;
}

/**
 * Locks a training client for a new request and records the request's time, in one statement (a request's submission
 * is on the path from submit to result: every round trip to the database counts): the row, and its model's entity for
 * the caller's scope.
 */
export async function lockTrainingClientForRequest(
  db: DbOrTx,
  modelId: string,
  now: Date,
): Promise<(TrainingClientRow & { entityId: string }) | undefined> {
  const [row] = await db
    .update(tinkerTrainingClients)
    .set({ lastRequestAt: now })
    .from(models)
    .where(and(eq(tinkerTrainingClients.modelId, modelId), eq(models.id, tinkerTrainingClients.modelId)))
    .returning({ ...getTableColumns(tinkerTrainingClients), entityId: models.entityId });
  return row;
}

/**
 * The value of `next_seq` after `seq` has run: the next seq_id, past every later one already failed at submission
 * (docs/tinker.md §2.3), as an expression for the update that moves it (no round trip of its own). The answer is
 * `seq + 1` or one past a failed request's seq_id, whichever is smallest and not itself failed.
 */
export function nextSeqAfter(modelId: string, seq: number): SQL {
  return sql`(SELECT min(cand.n) FROM (
      SELECT ${seq}::integer + 1 AS n
      UNION ALL SELECT f.seq_id + 1 FROM ${tinkerRequests} f
        WHERE f.model_id = ${modelId} AND f.status = 'failed' AND f.seq_id > ${seq}
    ) cand
    WHERE NOT EXISTS (
      SELECT 1 FROM ${tinkerRequests} g WHERE g.model_id = ${modelId} AND g.seq_id = cand.n AND g.status = 'failed'
    ))`;
}

export async function updateTrainingClient(
  db: DbOrTx,
  modelId: string,
  set: PgUpdateSetSource<typeof tinkerTrainingClients>,
): Promise<void> {
  await db.update(tinkerTrainingClients).set(set).where(eq(tinkerTrainingClients.modelId, modelId));
}

/** The live training clients bound to a worker (what it should hold). */
export async function clientsOfWorker(db: DbOrTx, workerId: string): Promise<TrainingClientRow[]> {
  return db
    .select()
    .from(tinkerTrainingClients)
    .where(and(eq(tinkerTrainingClients.workerId, workerId), eq(tinkerTrainingClients.status, 'ready')));
}

/** Live training clients (waiting or ready) whose worker has not been seen since `before` (or never registered). */
export async function clientsOfSilentWorkers(db: DbOrTx, before: Date): Promise<TrainingClientRow[]> {
  return db
    .select({ client: tinkerTrainingClients })
    .from(tinkerTrainingClients)
    .leftJoin(trainingWorkers, eq(trainingWorkers.id, tinkerTrainingClients.workerId))
    .where(
      and(
        inArray(tinkerTrainingClients.status, ['waiting', 'ready']),
        sql`${tinkerTrainingClients.workerId} is not null`,
        or(isNull(trainingWorkers.id), lt(trainingWorkers.lastSeenAt, before)),
      ),
    )
    .then((rows) => rows.map((r) => r.client));
}

/** Open training clients of the given sessions. */
export async function openClientsOfSessions(db: DbOrTx, sessionIds: string[]): Promise<TrainingClientRow[]> {
  if (sessionIds.length === 0) return [];
  return db
    .select()
    .from(tinkerTrainingClients)
    .where(
      and(
        inArray(tinkerTrainingClients.sessionId, sessionIds),
        inArray(tinkerTrainingClients.status, ['waiting', 'ready']),
      ),
    );
}

/** Training clients of these entities, live ones first, then the newest; for the dashboard. */
export async function listTrainingClients(
  db: DbOrTx,
  f: { entityIds: string[]; live?: boolean; modelId?: string; limit: number },
): Promise<TrainingClientWithModel[]> {
  if (f.entityIds.length === 0) return [];
  const conditions = [inArray(models.entityId, f.entityIds)];
  if (f.live) conditions.push(inArray(tinkerTrainingClients.status, ['waiting', 'ready']));
  if (f.modelId) conditions.push(eq(tinkerTrainingClients.modelId, f.modelId));
  const rows = await clientsWithModel(db)
    .where(and(...conditions))
    .orderBy(
      sql`case when ${tinkerTrainingClients.status} in ('waiting', 'ready') then 0 else 1 end`,
      desc(tinkerTrainingClients.lastRequestAt),
    )
    .limit(f.limit);
  return rows.map(flatten);
}

/** Live training clients per worker, for the Workers page. */
export async function liveClientsByWorker(db: DbOrTx, workerIds: string[]) {
  if (workerIds.length === 0) return [];
  return db
    .select({
      workerId: tinkerTrainingClients.workerId,
      modelId: tinkerTrainingClients.modelId,
      baseModel: tinkerTrainingClients.baseModel,
      status: tinkerTrainingClients.status,
    })
    .from(tinkerTrainingClients)
    .where(and(inArray(tinkerTrainingClients.workerId, workerIds), eq(tinkerTrainingClients.status, 'ready')));
}

// ---------------------------------------------------------------------------------------------------------------
// Requests (futures)

export async function findRequest(db: DbOrTx, id: string): Promise<TinkerRequestRow | undefined> {
  const [row] = await db.select().from(tinkerRequests).where(eq(tinkerRequests.id, id)).limit(1);
  return row;
}

/** The request a resent submission names: the same (model, seq_id), or the same idempotency key from one entity. */
export async function findDuplicateRequest(
  db: DbOrTx,
  input: {
    entityId: string;
    idempotencyKey: string | null;
    modelId?: string | null;
    samplingSessionId?: string | null;
    seqId: number | null;
  },
): Promise<TinkerRequestRow | undefined> {
  if (input.idempotencyKey) {
    const [row] = await db
      .select()
      .from(tinkerRequests)
      .where(and(eq(tinkerRequests.entityId, input.entityId), eq(tinkerRequests.idempotencyKey, input.idempotencyKey)))
      .limit(1);
    if (row) return row;
  }
  if (input.seqId === null) return undefined;
  if (input.modelId) {
    const [row] = await db
      .select()
      .from(tinkerRequests)
      .where(and(eq(tinkerRequests.modelId, input.modelId), eq(tinkerRequests.seqId, input.seqId)))
      .limit(1);
    return row;
  }
  if (input.samplingSessionId) {
    const [row] = await db
      .select()
      .from(tinkerRequests)
      .where(and(eq(tinkerRequests.samplingSessionId, input.samplingSessionId), eq(tinkerRequests.seqId, input.seqId)))
      .limit(1);
    return row;
  }
  return undefined;
}

/** Inserts a request; undefined when a unique key (seq_id, idempotency key) is already taken. */
export async function insertRequest(
  db: DbOrTx,
  input: typeof tinkerRequests.$inferInsert,
): Promise<TinkerRequestRow | undefined> {
  const rows = await db.insert(tinkerRequests).values(input).onConflictDoNothing().returning();
  return rows[0];
}

/** The highest seq_id any request of the model has. */
export async function highestSeq(db: DbOrTx, modelId: string): Promise<number> {
  const [row] = await db
    .select({ seq: sql<number | null>`max(${tinkerRequests.seqId})` })
    .from(tinkerRequests)
    .where(eq(tinkerRequests.modelId, modelId));
  return Number(row?.seq ?? 0);
}

export async function updateRequest(
  db: DbOrTx,
  id: string,
  set: Partial<typeof tinkerRequests.$inferInsert>,
): Promise<void> {
  await db.update(tinkerRequests).set(set).where(eq(tinkerRequests.id, id));
}

/** updateRequest, answering the row as it now is (in the same statement). */
export async function updateRequestReturning(
  db: DbOrTx,
  id: string,
  set: Partial<typeof tinkerRequests.$inferInsert>,
): Promise<TinkerRequestRow | undefined> {
  const [row] = await db.update(tinkerRequests).set(set).where(eq(tinkerRequests.id, id)).returning();
  return row;
}

/** A request and whether its training client still exists (its model was not deleted), in one statement. */
export async function findRequestAndClient(
  db: DbOrTx,
  id: string,
): Promise<{ request: TinkerRequestRow; clientExists: boolean } | undefined> {
  const [row] = await db
    .select({ request: tinkerRequests, clientModelId: tinkerTrainingClients.modelId })
    .from(tinkerRequests)
    .leftJoin(tinkerTrainingClients, eq(tinkerTrainingClients.modelId, tinkerRequests.modelId))
    .where(eq(tinkerRequests.id, id))
    .limit(1);
  return row && { request: row.request, clientExists: row.clientModelId !== null };
}

async function lockRequest(db: DbOrTx, id: string): Promise<TinkerRequestRow | undefined> {
  const [row] = await db.select().from(tinkerRequests).where(eq(tinkerRequests.id, id)).for('update').limit(1);
  return row;
}

/** Locks a request and its training client in one statement (a worker's answer); the client is null when it is gone. */
export async function lockRequestWithClient(
  db: DbOrTx,
  id: string,
): Promise<{ request: TinkerRequestRow; client: TrainingClientRow | null } | undefined> {
  const [row] = await db
    .select({ request: tinkerRequests, client: tinkerTrainingClients })
    .from(tinkerRequests)
    .innerJoin(tinkerTrainingClients, eq(tinkerTrainingClients.modelId, tinkerRequests.modelId))
    .where(eq(tinkerRequests.id, id))
    .for('update')
    .limit(1);
  if (row) return row;
  const request = await lockRequest(db, id);
  return request && { request, client: null };
}

/**
 * Hands a worker the next request of each training client it holds: the one at the client's `next_seq`, queued or
 * already handed to this same worker (whose answer was lost: it polls only when it runs nothing). Marks them running.
 * One statement, atomic on its own: a poll runs it each time it looks.
 */
export async function takeNextRequests(db: DbOrTx, workerId: string, now: Date): Promise<TinkerRequestRow[]> {
  const rows = await db
    .update(tinkerRequests)
    .set({
      status: 'running',
      workerId,
      startedAt: sql`coalesce(${tinkerRequests.startedAt}, ${now.toISOString()}::timestamptz)`,
    })
    .from(tinkerTrainingClients)
    .where(
      and(
        eq(tinkerTrainingClients.modelId, tinkerRequests.modelId),
        eq(tinkerTrainingClients.workerId, workerId),
        eq(tinkerTrainingClients.status, 'ready'),
        eq(tinkerRequests.seqId, tinkerTrainingClients.nextSeq),
        ne(tinkerRequests.kind, 'create_model'),
        or(
          eq(tinkerRequests.status, 'queued'),
          and(eq(tinkerRequests.status, 'running'), eq(tinkerRequests.workerId, workerId)),
        ),
      ),
    )
    .returning(getTableColumns(tinkerRequests));
  return rows.sort((a, b) => (a.seqId ?? 0) - (b.seqId ?? 0));
}

/**
 * The create_model requests this worker already took and has not answered (re-delivered after a lost answer), or
 * else the oldest queued one of a base model it can train, which binds that training client to this worker. One
 * statement (atomic on its own), and a second to read what it took when it took something.
 */
export async function takeCreateModel(
  db: DbOrTx,
  input: { workerId: string; baseModels: string[]; acceptNew: boolean; now: Date },
): Promise<TinkerRequestRow[]> {
  const accept = input.acceptNew && input.baseModels.length > 0;
  const bases = accept
    ? sql.join(
        input.baseModels.map((b) => sql`${b}`),
        sql`, `,
      )
    : sql`NULL`;
  const result = (await db.execute(sql`
    WITH mine AS (
      SELECT id FROM ${tinkerRequests}
      WHERE kind = 'create_model' AND status = 'running' AND worker_id = ${input.workerId}
    ), picked AS (
      SELECT r.id, r.model_id FROM ${tinkerRequests} r
      JOIN ${tinkerTrainingClients} c ON c.model_id = r.model_id
      WHERE ${accept}::boolean AND NOT EXISTS (SELECT 1 FROM mine)
        AND r.kind = 'create_model' AND r.status = 'queued' AND c.status = 'waiting' AND c.base_model IN (${bases})
      ORDER BY r.created_at, r.id
      LIMIT 1
      FOR UPDATE OF r SKIP LOCKED
    ), c AS (
      UPDATE ${tinkerTrainingClients} SET worker_id = ${input.workerId}
      WHERE model_id = (SELECT model_id FROM picked)
    ), taken AS (
      UPDATE ${tinkerRequests} SET status = 'running', worker_id = ${input.workerId},
        started_at = ${input.now.toISOString()}::timestamptz
      WHERE id = (SELECT id FROM picked)
      RETURNING id
    )
    SELECT id FROM mine UNION ALL SELECT id FROM taken`)) as unknown as { rows: { id: string }[] };
  const ids = result.rows.map((r) => r.id);
  if (ids.length === 0) return [];
  return db.select().from(tinkerRequests).where(inArray(tinkerRequests.id, ids));
}

/** Puts a training client's create_model back in the queue (its worker died before answering it). */
export async function requeueCreateModel(db: DbOrTx, modelId: string): Promise<void> {
  await db
    .update(tinkerRequests)
    .set({ status: 'queued', workerId: null, startedAt: null })
    .where(
      and(
        eq(tinkerRequests.modelId, modelId),
        eq(tinkerRequests.kind, 'create_model'),
        eq(tinkerRequests.status, 'running'),
      ),
    );
}

/** Fails every open request of a training client (its worker died, its session ended, it was deleted). */
export async function failOpenRequests(
  db: DbOrTx,
  modelId: string,
  error: string,
  category: 'user' | 'server',
  now: Date,
): Promise<string[]> {
  const rows = await db
    .update(tinkerRequests)
    .set({ status: 'failed', error, errorCategory: category, finishedAt: now, payload: null })
    .where(and(eq(tinkerRequests.modelId, modelId), inArray(tinkerRequests.status, ['queued', 'running'])))
    .returning({ id: tinkerRequests.id });
  return rows.map((r) => r.id);
}

/**
 * Clients with a queued request past their next_seq and none at it: the seq_id that holds them up never arrived.
 * Answers each with the lowest seq_id waiting.
 */
export async function clientsWithGaps(
  db: DbOrTx,
): Promise<{ modelId: string; gapSince: Date | null; lowest: number; nextSeq: number }[]> {
  const result = (await db.execute(sql`
    SELECT c.model_id, c.gap_since, c.next_seq, min(r.seq_id) AS lowest
    FROM ${tinkerTrainingClients} c
    JOIN ${tinkerRequests} r ON r.model_id = c.model_id AND r.status = 'queued' AND r.seq_id > c.next_seq
    WHERE c.status = 'ready'
      AND NOT EXISTS (SELECT 1 FROM ${tinkerRequests} n WHERE n.model_id = c.model_id AND n.seq_id = c.next_seq)
    GROUP BY c.model_id, c.gap_since, c.next_seq`)) as unknown as {
    rows: { model_id: string; gap_since: string | Date | null; next_seq: number; lowest: number }[];
  };
  return result.rows.map((r) => ({
    modelId: r.model_id,
    gapSince: r.gap_since === null ? null : new Date(r.gap_since),
    lowest: Number(r.lowest),
    nextSeq: Number(r.next_seq),
  }));
}

/** Requests the server itself runs (sampling) still open since before `before`: their process died. */
export async function staleServerRequests(db: DbOrTx, before: Date): Promise<TinkerRequestRow[]> {
  return db
    .select()
    .from(tinkerRequests)
    .where(
      and(
        eq(tinkerRequests.kind, 'sample'),
        inArray(tinkerRequests.status, ['queued', 'running']),
        lt(tinkerRequests.createdAt, before),
      ),
    );
}

/** Forgets requests that finished before `before` (docs/tinker.md §2.2: results are kept an hour). */
export async function deleteFinishedRequests(db: DbOrTx, before: Date): Promise<number> {
  const rows = await db
    .delete(tinkerRequests)
    .where(and(inArray(tinkerRequests.status, ['done', 'failed']), lt(tinkerRequests.finishedAt, before)))
    .returning({ id: tinkerRequests.id });
  return rows.length;
}

/** The open requests of a training client and its recent ones, newest first, for the dashboard. */
export async function recentRequestsOfModel(db: DbOrTx, modelId: string, limit: number): Promise<TinkerRequestRow[]> {
  return db
    .select({
      ...getTableColumns(tinkerRequests),
      // The dashboard shows neither payloads nor results: they can be megabytes.
      payload: sql<null>`null`,
      result: sql<null>`null`,
    })
    .from(tinkerRequests)
    .where(eq(tinkerRequests.modelId, modelId))
    .orderBy(desc(tinkerRequests.createdAt))
    .limit(limit);
}

/** How many requests of each training client are open (queued or running). */
export async function openRequestCounts(
  db: DbOrTx,
  modelIds: string[],
): Promise<Map<string, { queued: number; running: number }>> {
  const out = new Map<string, { queued: number; running: number }>();
  if (modelIds.length === 0) return out;
  const rows = await db
    .select({
      modelId: tinkerRequests.modelId,
      status: tinkerRequests.status,
      n: sql<number>`count(*)::int`,
    })
    .from(tinkerRequests)
    .where(and(inArray(tinkerRequests.modelId, modelIds), inArray(tinkerRequests.status, ['queued', 'running'])))
    .groupBy(tinkerRequests.modelId, tinkerRequests.status);
  for (const r of rows) {
    const entry = out.get(r.modelId!) ?? { queued: 0, running: 0 };
    if (r.status === 'queued') entry.queued = Number(r.n);
    else entry.running = Number(r.n);
    out.set(r.modelId!, entry);
  }
  return out;
}

export type { TinkerRequestKind };

// ---------------------------------------------------------------------------------------------------------------
// Sampling sessions

export async function insertSamplingSession(
  db: DbOrTx,
  input: typeof tinkerSamplingSessions.$inferInsert,
): Promise<SamplingSessionRow | undefined> {
  const rows = await db.insert(tinkerSamplingSessions).values(input).onConflictDoNothing().returning();
  return rows[0];
}

export async function findSamplingSession(db: DbOrTx, id: string): Promise<SamplingSessionRow | undefined> {
  const [row] = await db.select().from(tinkerSamplingSessions).where(eq(tinkerSamplingSessions.id, id)).limit(1);
  return row;
}

export async function findSamplingSessionBySeq(
  db: DbOrTx,
  sessionId: string,
  seq: number,
): Promise<SamplingSessionRow | undefined> {
  const [row] = await db
    .select()
    .from(tinkerSamplingSessions)
    .where(and(eq(tinkerSamplingSessions.sessionId, sessionId), eq(tinkerSamplingSessions.seq, seq)))
    .limit(1);
  return row;
}

/** The next sampling-session seq of a session the server allots itself (unnamed sampler saves). */
export async function nextSamplingSeq(db: DbOrTx, sessionId: string): Promise<number> {
  const [row] = await db
    .select({ seq: sql<number | null>`max(${tinkerSamplingSessions.seq})` })
    .from(tinkerSamplingSessions)
    .where(eq(tinkerSamplingSessions.sessionId, sessionId));
  return Number(row?.seq ?? -1) + 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Saved weights

export async function insertWeights(db: DbOrTx, input: typeof tinkerWeights.$inferInsert): Promise<TinkerWeightsRow> {
  const [row] = await db
    .insert(tinkerWeights)
    .values(input)
    .onConflictDoUpdate({
      target: [tinkerWeights.modelId, tinkerWeights.kind, tinkerWeights.name],
      set: {
        checkpointId: input.checkpointId ?? null,
        prefix: input.prefix,
        sizeBytes: input.sizeBytes,
        ephemeral: input.ephemeral ?? 0,
        createdAt: sql`now()`,
        expiresAt: input.expiresAt ?? null,
      },
    })
    .returning();
  return row;
}

export async function findWeights(
  db: DbOrTx,
  modelId: string,
  kind: 'training' | 'sampler',
  name: string,
): Promise<TinkerWeightsRow | undefined> {
  const [row] = await db
    .select()
    .from(tinkerWeights)
    .where(and(eq(tinkerWeights.modelId, modelId), eq(tinkerWeights.kind, kind), eq(tinkerWeights.name, name)))
    .limit(1);
  return row;
}

export async function listWeightsOfModel(db: DbOrTx, modelId: string): Promise<TinkerWeightsRow[]> {
  return db
    .select()
    .from(tinkerWeights)
    .where(eq(tinkerWeights.modelId, modelId))
    .orderBy(desc(tinkerWeights.createdAt), desc(tinkerWeights.name));
}

/** Saved weights of every model of these entities, newest first, with a total for paging. */
export async function pageWeightsInScope(
  db: DbOrTx,
  f: { entityIds: string[]; limit: number; offset: number },
): Promise<{ rows: TinkerWeightsRow[]; total: number }> {
  if (f.entityIds.length === 0) return { rows: [], total: 0 };
  const scope = inArray(models.entityId, f.entityIds);
  const rows = await db
    .select({ w: tinkerWeights })
    .from(tinkerWeights)
    .innerJoin(models, eq(models.id, tinkerWeights.modelId))
    .where(scope)
    .orderBy(desc(tinkerWeights.createdAt), desc(tinkerWeights.id))
    .limit(f.limit)
    .offset(f.offset);
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(tinkerWeights)
    .innerJoin(models, eq(models.id, tinkerWeights.modelId))
    .where(scope);
  return { rows: rows.map((r) => r.w), total: Number(n) };
}

export async function deleteWeights(db: DbOrTx, id: string): Promise<void> {
  await db.delete(tinkerWeights).where(eq(tinkerWeights.id, id));
}

/** Unnamed sampler saves of a model beyond the newest `keep`: the ones to delete. */
export async function surplusEphemeralWeights(db: DbOrTx, modelId: string, keep: number): Promise<TinkerWeightsRow[]> {
  return db
    .select()
    .from(tinkerWeights)
    .where(and(eq(tinkerWeights.modelId, modelId), eq(tinkerWeights.kind, 'sampler'), gt(tinkerWeights.ephemeral, 0)))
    .orderBy(desc(tinkerWeights.createdAt), desc(tinkerWeights.name))
    .offset(keep);
}

export async function expiredWeights(db: DbOrTx, now: Date, limit = 100): Promise<TinkerWeightsRow[]> {
  return db.select().from(tinkerWeights).where(lt(tinkerWeights.expiresAt, now)).limit(limit);
}

/** Training runs (training clients' models) of these entities, newest first, with a total for paging. */
export async function pageTrainingRuns(
  db: DbOrTx,
  f: { entityIds: string[]; limit: number; offset: number },
): Promise<{ rows: TrainingClientWithModel[]; total: number }> {
  if (f.entityIds.length === 0) return { rows: [], total: 0 };
  const scope = inArray(models.entityId, f.entityIds);
  const rows = await clientsWithModel(db)
    .where(scope)
    .orderBy(desc(tinkerTrainingClients.createdAt), desc(tinkerTrainingClients.modelId))
    .limit(f.limit)
    .offset(f.offset);
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(tinkerTrainingClients)
    .innerJoin(models, eq(models.id, tinkerTrainingClients.modelId))
    .where(scope);
  return { rows: rows.map(flatten), total: Number(n) };
}

// ---------------------------------------------------------------------------------------------------------------
// Download links

export async function insertArchiveLink(db: DbOrTx, input: typeof tinkerArchiveLinks.$inferInsert): Promise<void> {
  await db.insert(tinkerArchiveLinks).values(input);
}

/** The saved weights a live download link names. */
export async function findArchiveLink(db: DbOrTx, tokenHash: string, now: Date): Promise<TinkerWeightsRow | undefined> {
  const [row] = await db
    .select({ w: tinkerWeights })
    .from(tinkerArchiveLinks)
    .innerJoin(tinkerWeights, eq(tinkerWeights.id, tinkerArchiveLinks.weightsId))
    .where(and(eq(tinkerArchiveLinks.tokenHash, tokenHash), gt(tinkerArchiveLinks.expiresAt, now)))
    .limit(1);
  return row?.w;
}

export async function deleteExpiredArchiveLinks(db: DbOrTx, now: Date): Promise<void> {
  await db.delete(tinkerArchiveLinks).where(lt(tinkerArchiveLinks.expiresAt, now));
}
