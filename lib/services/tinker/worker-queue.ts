import 'server-only';
import { queueAutoEvalRun } from '@/lib/db/repositories/evals';
import { wakeEvalRunner } from '../eval-runner';
import { ApiError } from '@/lib/errors';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { appendGradientMarks } from '@/lib/db/repositories/gradient-marks';
import { appendRunPoints, upsertRunMetrics } from '@/lib/db/repositories/run-metrics';
import * as repo from '@/lib/db/repositories/tinker';
import * as workersRepo from '@/lib/db/repositories/training-workers';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import { artifactExists, deleteArtifacts, putArtifactStream } from '@/lib/storage';
import type { ForwardResult } from '@/lib/tinker/types';
import { trainableBaseModelIds } from '../base-models';
import { modelsChanged } from '../served-models';
import { listenFor, NEW_CLIENT_KEY, requestKey, wake, wakeWith, workerKey } from './wakeups';
import { sizeFromFiles, tinkerPath, type WeightFile } from './weights-files';

const log = componentLogger('tinker');

/**
 * The worker side of Tinker training clients (docs/tinker.md §3): a Python worker long-polls for the next request
 * of each training client it holds (and for a new training client when it has room), runs it, uploads files and
 * posts the answer. Every answer's effects (a checkpoint, a point of the training curve, the next seq_id) are
 * written with it in one transaction.
 */

/** Unnamed sampler saves kept per training client (docs/tinker.md §2.6). */
export const EPHEMERAL_KEPT = 3;
const MAX_WAIT_MS = 30_000;

export interface WorkerTinkerRequest {
  request_id: string;
  model_id: string;
  seq_id: number | null;
  kind: repo.TinkerRequestKind;
  payload: Record<string, unknown>;
}

/** What the payload carries for the server alone, never handed to the worker. */
const SERVER_ONLY = 'tuneboard';

function toWorkerRequest(row: repo.TinkerRequestRow): WorkerTinkerRequest {
  const { [SERVER_ONLY]: _server, ...payload } = (row.payload ?? {}) as Record<string, unknown>;
  void _server;
  return { request_id: row.id, model_id: row.modelId!, seq_id: row.seqId, kind: row.kind, payload };
}

export interface PollInput {
  workerId: string;
  capabilities: { backends: ('builtin' | 'hf')[]; base_models?: string[] };
  kinds?: string[];
  info?: Record<string, unknown>;
  held: string[];
  acceptNew: boolean;
  waitMs: number;
}

/** The training clients a worker must free: held but not (or no longer) its live ones (`live`: read already). */
async function toDrop(
  db: DbOrTx,
  workerId: string,
  held: string[],
  live?: repo.TrainingClientRow[],
): Promise<string[]> {
  if (held.length === 0) return [];
  const ids = new Set((live ?? (await repo.clientsOfWorker(db, workerId))).map((c) => c.modelId));
  return held.filter((id) => !ids.has(id));
}

/**
 * When each worker's poll last recorded it as seen, and what with: a worker polls again after every request it answers,
 * and writing the same row each time cost the poll a write (on the path from submit to result) for a last-seen time
 * no one needs to the millisecond. Recorded again after a tenth of the lease (at most 5 s), or when what it says of
 * itself changes.
 */
const touched = new Map<string, { at: number; what: string }>();
const TOUCH_EVERY_MS = 5000;

async function touchWorker(input: Pick<PollInput, 'workerId' | 'capabilities' | 'kinds' | 'info'>) {
  const capabilities = { ...input.capabilities, kinds: input.kinds ?? ['tinker'] };
  const what = JSON.stringify([capabilities, input.info ?? null]);
  const now = Date.now();
  const last = touched.get(input.workerId);
  if (last && last.what === what && now - last.at < Math.min(TOUCH_EVERY_MS, config.jobLeaseSeconds * 100)) return;
  // A polling worker runs no job: the loop never claims one while it holds training clients (docs/tinker.md §3.2).
  await workersRepo.touchWorker(await getDb(), {
    id: input.workerId,
    now: new Date(now),
    currentJobId: null,
    capabilities,
    ...(input.info ? { info: input.info } : {}),
  });
  touched.set(input.workerId, { at: now, what });
  if (touched.size > 10_000) touched.delete(touched.keys().next().value!);
}

/** docs/tinker.md §3.2: the next requests of the worker's training clients, a new one, and what to drop. */
export async function poll(
  input: PollInput,
  signal?: AbortSignal,
): Promise<{ requests: WorkerTinkerRequest[]; drop: string[]; lease_seconds: number }> {
  const db = await getDb();
  await touchWorker(input);
  // The worker's live clients, read once for both: the forgotten ones fail, the first look's drops come from it.
  let live: repo.TrainingClientRow[] | undefined = await repo.clientsOfWorker(db, input.workerId);
  await failForgotten(input.workerId, input.held, live);
  const deadline = Date.now() + Math.min(Math.max(0, input.waitMs), MAX_WAIT_MS);
  const baseModels = trainableBaseModelIds({
    backends: input.capabilities.backends,
    base_models: input.capabilities.base_models,
  });
  for (;;) {
    // Listening before the queries: a request submitted between them and the wait still wakes this poll.
    const listener = listenFor([workerKey(input.workerId), ...(input.acceptNew ? [NEW_CLIENT_KEY] : [])]);
    try {
      const now = new Date();
      const drop = await toDrop(db, input.workerId, input.held, live);
      live = undefined;
      const held = new Set(input.held.filter((id) => !drop.includes(id)));
      // Each a single statement, atomic on its own (no transaction's BEGIN and COMMIT to wait for).
      const next = (await repo.takeNextRequests(db, input.workerId, now)).filter((r) =>
        // A request of a client the worker does not say it holds would fail there: its holder restarted (the sweeper
        // fails the client once the worker is silent; a restarted worker's id differs anyway).
        held.has(r.modelId!),
      );
      // A new training client waits for the next poll when there are requests to run: the worker runs what it is
      // handed in order, so it would start on it only after them anyway, and the next poll comes right after.
      const created =
        next.length > 0
          ? []
          : await repo.takeCreateModel(db, { workerId: input.workerId, baseModels, acceptNew: input.acceptNew, now });
      const requests = [...next, ...created].map(toWorkerRequest);
      if (requests.length > 0 || drop.length > 0 || Date.now() >= deadline || signal?.aborted) {
        if (requests.length > 0)
          log.debug({ worker: input.workerId, n: requests.length }, 'tinker requests handed out');
        // The worker heart-beats a quarter of this while a long request runs, and retries its answers for this long.
        return { requests, drop, lease_seconds: config.jobLeaseSeconds };
      }
      await listener.wait(deadline - Date.now(), signal);
    } finally {
      listener.close();
    }
  }
}

/**
 * Training clients the server has bound to this worker that the worker does not say it holds: a worker that
 * restarted under the same id (a fixed TUNEBOARD_WORKER_ID) lost their state. They fail now, saying so, rather than
 * wait for a lease that a live worker keeps renewing. (A worker adds a training client to what it holds before it
 * answers its create_model, so a fresh one is never taken for forgotten.)
 */
async function failForgotten(workerId: string, held: string[], live: repo.TrainingClientRow[]): Promise<void> {
  const forgotten = live.filter((c) => !held.includes(c.modelId));
  const woken: string[] = [];
  for (const client of forgotten) {
    const failed = await failLostClient(
      client,
      `The worker ${workerId} restarted and no longer holds training client ${client.modelId}; its state in memory is lost: resume from its last save_state (create_training_client_from_state_with_optimizer)`,
    );
    log.warn({ modelId: client.modelId, worker: workerId }, 'training client forgotten by its restarted worker');
    woken.push(...failed.map(requestKey));
  }
  if (woken.length) await wake(...woken);
}

/**
 * Fails a ready training client whose worker lost its state (died, or restarted), and its open requests, unless it
 * changed meanwhile (another process failed it first, or it was closed). Answers the failed requests' ids.
 */
export async function failLostClient(client: repo.TrainingClientRow, message: string): Promise<string[]> {
  const now = new Date();
  return (await getDb()).transaction(async (tx) => {
    const locked = await repo.lockTrainingClient(tx, client.modelId);
    if (locked?.status !== 'ready' || locked.workerId !== client.workerId) return [];
    await repo.updateTrainingClient(tx, client.modelId, {
      status: 'failed',
      error: message,
      errorCategory: 'server',
      endedAt: now,
    });
    return repo.failOpenRequests(tx, client.modelId, message, 'server', now);
  });
}

/** A busy worker's liveness call (a long request must not look like a dead worker), with what to drop. */
export async function heartbeat(input: { workerId: string; held: string[]; info?: Record<string, unknown> }) {
  const db = await getDb();
  await workersRepo.touchWorker(db, {
    id: input.workerId,
    now: new Date(),
    currentJobId: null,
    ...(input.info ? { info: input.info } : {}),
  });
  return { drop: await toDrop(db, input.workerId, input.held) };
}

/** The request, if the worker holds it now (running on it); 409 otherwise. */
async function requireHeld(db: DbOrTx, workerId: string, requestId: string): Promise<repo.TinkerRequestRow> {
  const row = await repo.findRequest(db, requestId);
  if (!row) throw ApiError.notFound('Tinker request not found');
  if (row.status !== 'running' || row.workerId !== workerId) {
    throw new ApiError('conflict', `This worker no longer runs request ${requestId} (${row.status})`);
  }
  return row;
}

/** Where a request's files go: under its model, so that deleting the model deletes them. */
export const requestPrefix = (modelId: string, requestId: string) => `models/${modelId}/tinker/${requestId}`;

/** Stores one file of a save (written whole, then renamed into place; a resend overwrites). */
export async function putFile(workerId: string, requestId: string, file: WeightFile, body: NodeJS.ReadableStream) {
  const db = await getDb();
  const row = await requireHeld(db, workerId, requestId);
  if (row.kind !== 'save_weights' && row.kind !== 'save_weights_for_sampler') {
    throw new ApiError('bad_request', `Request ${requestId} is a ${row.kind}: only saves upload files`);
  }
  if (row.kind === 'save_weights_for_sampler' && file === 'optimizer.safetensors') {
    throw new ApiError('bad_request', 'Sampler weights hold no optimizer state');
  }
  const key = `${requestPrefix(row.modelId!, row.id)}/${file}`;
  const size = await putArtifactStream(key, body, {
    limit: config.maxCheckpointBytes,
    onLimit: () => new ApiError('payload_too_large', `${file} is larger than TUNEBOARD_MAX_CHECKPOINT_MB`),
  });
  return { size };
}

/** The artifact key of a file of the state a load_weights request restores. */
export async function fileToLoad(workerId: string, requestId: string, file: WeightFile): Promise<string> {
  const row = await requireHeld(await getDb(), workerId, requestId);
  const source = (row.payload?.[SERVER_ONLY] as { source_prefix?: string } | undefined)?.source_prefix;
  if (row.kind !== 'load_weights' || !source)
    throw new ApiError('bad_request', `Request ${requestId} loads no weights`);
  const key = `${source}/${file}`;
  if (!(await artifactExists(key))) throw ApiError.notFound(`${file} is not part of the weights being loaded`);
  return key;
}

export type WorkerAnswer =
  | { result: Record<string, unknown>; error?: undefined }
  | { error: { message: string; category: 'user' | 'server' }; result?: undefined };

/** What a finished request changes besides its own row, done after the transaction commits. */
/** What a transaction that changed saves leaves to do once it has committed (see runAfterCommit). */
export interface AfterCommit {
  /** Models whose checkpoints changed: the serving caches forget them. */
  changedModels: Set<string>;
  /** Folders of files no row refers to any more. */
  deleteKeys: string[];
  /** Auto-eval runs queued with new checkpoints: the eval runner is woken for them. */
  evalRuns?: string[];
}

export const afterCommit = (): AfterCommit => ({ changedModels: new Set(), deleteKeys: [] });

/** Tells the serving caches which models changed and deletes the files; a file left behind is the orphan sweep's. */
export async function runAfterCommit(after: AfterCommit): Promise<void> {
  if (after.changedModels.size) await modelsChanged([...after.changedModels]);
  for (const id of after.evalRuns ?? []) await wakeEvalRunner(id);
  for (const key of after.deleteKeys) {
    await deleteArtifacts(key).catch((err) =>
      log.warn({ key, err: (err as Error).message }, 'files of a deleted save left for the orphan sweep'),
    );
  }
}

/**
 * Records a worker's answer and everything it implies, in one transaction (docs/tinker.md §3.3). A resent answer of
 * a request already answered by this worker is acknowledged without effect.
 */
export async function answer(workerId: string, requestId: string, a: WorkerAnswer): Promise<{ ok: true }> {
  const db = await getDb();
  let after = afterCommit();
  // The request's row once answered, handed to a retrieve_future waiting in this process (it need not read it back).
  let finished: repo.TinkerRequestRow | undefined;
  const outcome = await db.transaction(async (tx) => {
    const locked = await repo.lockRequestWithClient(tx, requestId);
    if (!locked) throw ApiError.notFound('Tinker request not found');
    const { request: row, client } = locked;
    if ((row.status === 'done' || row.status === 'failed') && row.workerId === workerId) return 'repeat' as const;
    if (row.status !== 'running' || row.workerId !== workerId) {
      throw new ApiError('conflict', `This worker no longer runs request ${requestId} (${row.status})`);
    }
    const now = new Date();
    if (!client) {
      await repo.updateRequest(tx, row.id, {
        status: 'failed',
        error: 'The model of this training client was deleted',
        errorCategory: 'user',
        finishedAt: now,
        payload: null,
      });
      return 'done' as const;
    }
    // Everything the answer changes in the training client's row, written once at the end: each statement is a round
    // trip on the path from the worker's answer to the client's retrieve_future.
    let clientSet: ClientSet = { lastRequestAt: now };
    if (a.error) {
      finished = await repo.updateRequestReturning(tx, row.id, {
        status: 'failed',
        error: a.error.message.slice(0, 4000),
        errorCategory: a.error.category,
        finishedAt: now,
        payload: null,
      });
      if (row.kind === 'create_model') {
        Object.assign(clientSet, {
          status: 'failed',
          error: a.error.message.slice(0, 4000),
          errorCategory: a.error.category,
          endedAt: now,
        });
      }
    } else {
      // An answer the server cannot accept (a file missing, outputs that do not fit) fails the request with the reason
      // instead of leaving it running, and none of its effects stay: in a savepoint, except for the kinds whose
      // checks all come before their first write (no savepoint's two statements for the training loop's calls).
      let refused: string | null = null;
      try {
        const apply = (d: DbOrTx) => applyResult(d, row, client, a.result, now, after, clientSet);
        const result = CHECKED_BEFORE_WRITING.has(row.kind) ? await apply(tx) : await tx.transaction(apply);
        finished = await repo.updateRequestReturning(tx, row.id, {
          status: 'done',
          result,
          finishedAt: now,
          payload: null,
        });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        refused = err.message;
      }
      if (refused !== null) {
        finished = undefined;
        after = afterCommit();
        clientSet = { lastRequestAt: now };
        await repo.updateRequest(tx, row.id, {
          status: 'failed',
          error: `The worker's answer could not be used: ${refused}`,
          errorCategory: 'server',
          finishedAt: now,
          payload: null,
        });
        if (row.kind === 'create_model') {
          Object.assign(clientSet, { status: 'failed', error: refused, errorCategory: 'server', endedAt: now });
        }
      }
    }
    if (row.kind !== 'create_model' && row.seqId !== null && row.seqId === client.nextSeq) {
      Object.assign(clientSet, { nextSeq: repo.nextSeqAfter(client.modelId, row.seqId), gapSince: null });
    }
    await repo.updateTrainingClient(tx, client.modelId, clientSet);
    return 'done' as const;
  });
  if (outcome === 'done') {
    if (finished) await wakeWith(requestKey(requestId), finished);
    else await wake(requestKey(requestId));
    await runAfterCommit(after);
  }
  return { ok: true };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** The SDK's part of a forward result: outputs and metrics, checked; the dashboard's `stats` kept apart. */
function forwardResult(row: repo.TinkerRequestRow, result: Record<string, unknown>): ForwardResult {
  const datums = Array.isArray((row.payload as { data?: unknown[] } | null)?.data)
    ? (row.payload as { data: unknown[] }).data.length
    : undefined;
  const outputs = result.loss_fn_outputs;
  const metrics = result.metrics;
  if (!Array.isArray(outputs) || (datums !== undefined && outputs.length !== datums)) {
    throw new ApiError('bad_request', `loss_fn_outputs must have one entry per datum (${datums})`);
  }
  if (typeof metrics !== 'object' || metrics === null || Object.values(metrics).some((v) => typeof v !== 'number')) {
    throw new ApiError('bad_request', 'metrics must be an object of numbers');
  }
  return {
    loss_fn_outputs: outputs as ForwardResult['loss_fn_outputs'],
    metrics: metrics as Record<string, number>,
  };
}

/** Stats keys summed over the forward_backward calls of one optim step (docs/tinker.md §3.2). */
const SUMMED = ['loss_sum', 'num_sequences', 'num_tokens', 'num_loss_tokens', 'weight_sum', 'seconds'] as const;
/** Stats that are means over loss tokens: accumulated weighted by num_loss_tokens. */
const MEANS = ['ratio_mean', 'clip_fraction', 'kl_sample_train', 'advantage_mean'] as const;

function accumulate(pending: Record<string, number> | null, stats: Record<string, unknown>): Record<string, number> {
  const out = { ...(pending ?? {}) };
  const n = num(stats.num_loss_tokens);
  for (const k of SUMMED) out[k] = (out[k] ?? 0) + num(stats[k]);
  for (const k of MEANS) {
    if (typeof stats[k] !== 'number') continue;
    out[`${k}__weighted`] = (out[`${k}__weighted`] ?? 0) + num(stats[k]) * n;
    out[`${k}__tokens`] = (out[`${k}__tokens`] ?? 0) + n;
  }
  out.forward_backward_calls = (out.forward_backward_calls ?? 0) + 1;
  return out;
}

/** One point of the model's training curve per optim_step: what the forward_backward calls before it added up to. */
function curvePoint(pending: Record<string, number> | null, stats: Record<string, unknown>): Record<string, number> {
  const p = pending ?? {};
  const point: Record<string, number> = {};
  if (p.forward_backward_calls) {
    point.loss_sum = p.loss_sum ?? 0;
    // Comparable between steps whatever the batch (docs/tinker.md §2.4 sums over tokens): for cross_entropy the
    // weighted mean NLL (the loss per unit of |weight|, tinker-cookbook's train_mean_nll), for RL losses the loss per
    // token that has an advantage.
    const per = p.weight_sum || p.num_loss_tokens;
    if (per) point.loss = (p.loss_sum ?? 0) / per;
    point.num_sequences = p.num_sequences ?? 0;
    point.num_tokens = p.num_tokens ?? 0;
    point.num_trainable_tokens = p.num_loss_tokens ?? 0;
    for (const k of MEANS) {
      const tokens = p[`${k}__tokens`];
      if (tokens) point[k] = (p[`${k}__weighted`] ?? 0) / tokens;
    }
  }
  point.grad_norm = num(stats.grad_norm);
  point.learning_rate = num(stats.learning_rate);
  point.seconds = (p.seconds ?? 0) + num(stats.seconds);
  return point;
}

/** What an answer changes in its training client's row (written once, with the answer's other effects). */
type ClientSet = Parameters<typeof repo.updateTrainingClient>[2];

/**
 * Kinds whose result is checked whole before applyResult writes anything (and whose writes cannot be refused): their
 * answer needs no savepoint to leave nothing behind when it is refused.
 */
const CHECKED_BEFORE_WRITING = new Set<repo.TinkerRequestKind>(['forward', 'forward_backward', 'optim_step']);

/**
 * The effects of a successful answer; returns what the request's row keeps as its result. Changes to the training
 * client's row go into `clientSet`, which the caller writes.
 */
async function applyResult(
  tx: DbOrTx,
  row: repo.TinkerRequestRow,
  client: repo.TrainingClientRow,
  result: Record<string, unknown>,
  now: Date,
  after: AfterCommit,
  clientSet: ClientSet,
): Promise<Record<string, unknown>> {
  const server = ((row.payload ?? {})[SERVER_ONLY] ?? {}) as {
    name?: string;
    ttl_seconds?: number | null;
    sampling_session_seq_id?: number | null;
    source_path?: string;
  };
  switch (row.kind) {
    case 'create_model':
      clientSet.status = 'ready';
      return { model_id: client.modelId };
    case 'forward': {
      return { ...forwardResult(row, result) };
    }
    case 'forward_backward': {
      const out = forwardResult(row, result);
      const stats = (result.stats ?? {}) as Record<string, unknown>;
      clientSet.pendingStats = accumulate(client.pendingStats, stats);
      return { ...out };
    }
    case 'optim_step': {
      const stats = (result.stats ?? {}) as Record<string, unknown>;
      const point = curvePoint(client.pendingStats, stats);
      const before = await modelsRepo.advanceGradientSteps(tx, client.modelId, 1);
      if (before !== undefined) {
        await appendRunPoints(tx, modelsRepo.gradientRunId(client.modelId), [{ step: before + 1, metrics: point }]);
        await appendGradientMarks(tx, client.modelId, before, [point]);
      }
      Object.assign(clientSet, { optimSteps: client.optimSteps + 1, pendingStats: null, lastMetrics: point });
      const metrics = result.metrics;
      return { metrics: typeof metrics === 'object' && metrics !== null ? metrics : {} };
    }
    case 'save_weights':
    case 'save_weights_for_sampler':
      return saveResult(tx, row, client, server, result, now, after);
    case 'load_weights':
      return { path: server.source_path ?? null, model_id: client.modelId };
    case 'unload_model':
      Object.assign(clientSet, { status: 'closed', error: 'unloaded by its client (unload_model)', endedAt: now });
      return { model_id: client.modelId };
    default:
      throw new ApiError('bad_request', `A worker does not answer ${row.kind} requests`);
  }
}

async function saveResult(
  tx: DbOrTx,
  row: repo.TinkerRequestRow,
  client: repo.TrainingClientRow,
  server: { name?: string; ttl_seconds?: number | null; sampling_session_seq_id?: number | null },
  result: Record<string, unknown>,
  now: Date,
  after: AfterCommit,
): Promise<Record<string, unknown>> {
  const prefix = requestPrefix(client.modelId, row.id);
  const sampler = row.kind === 'save_weights_for_sampler';
  const needed: WeightFile[] = sampler
    ? ['adapter_config.json', 'adapter_model.safetensors']
    : ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors'];
  for (const file of needed) {
    if (!(await artifactExists(`${prefix}/${file}`))) {
      throw new ApiError('bad_request', `${file} of this save was not uploaded before its result`);
    }
  }
  const ephemeral = sampler && !server.name;
  const name = server.name ?? `ephemeral-${row.seqId}`;
  const kind = sampler ? 'sampler' : 'training';
  const expiresAt = server.ttl_seconds ? new Date(now.getTime() + server.ttl_seconds * 1000) : null;
  let checkpointId: string | null = null;
  if (sampler) {
    const model = await modelsRepo.lockModel(tx, client.modelId);
    if (!model) throw new ApiError('bad_request', 'The model of this training client was deleted');
    const step = model.lastStep + 1;
    const metrics: Record<string, number> = { 'train/optim_steps': client.optimSteps };
    for (const [k, v] of Object.entries(client.lastMetrics ?? {})) metrics[`train/${k}`] = v;
    const [checkpoint] = await modelsRepo.insertCheckpoint(tx, {
      modelId: model.id,
      step,
      metrics,
      artifactKey: `${prefix}/adapter_model.safetensors`,
    });
    await upsertRunMetrics(tx, model.runId, step, metrics);
    checkpointId = checkpoint.id;
    after.changedModels.add(model.id);
    // Named sampler weights are checkpoints a user keeps: the model's auto-eval evaluates them (docs/evals.md). The
    // unnamed ones of save_weights_and_get_sampling_client are dropped after EPHEMERAL_KEPT more saves, usually before
    // a run on them could finish, so they are not evaluated.
    if (!ephemeral) {
      const evalRun = await queueAutoEvalRun(tx, model.id, step);
      if (evalRun) (after.evalRuns ??= []).push(evalRun);
    }
  }
  const previous = await repo.findWeights(tx, client.modelId, kind, name);
  await repo.insertWeights(tx, {
    modelId: client.modelId,
    kind,
    name,
    checkpointId,
    prefix,
    sizeBytes: sizeFromFiles(result.files),
    ephemeral: ephemeral ? 1 : 0,
    expiresAt,
  });
  if (previous && previous.prefix !== prefix) {
    // Overwritten by name: the old files (and, for sampler weights, the old checkpoint) go.
    await dropSaved(tx, previous, after);
  }
  if (ephemeral) {
    for (const surplus of await repo.surplusEphemeralWeights(tx, client.modelId, EPHEMERAL_KEPT)) {
      await dropSaved(tx, surplus, after);
    }
  }
  const path = tinkerPath(client.modelId, kind, name);
  if (!ephemeral) return { path };
  // save_weights_and_get_sampling_client: the answer is a sampling session on the new weights, numbered by the SDK.
  const session = await repo.findSession(tx, client.sessionId);
  const seq = server.sampling_session_seq_id ?? (await repo.nextSamplingSeq(tx, client.sessionId));
  const created =
    (await repo.insertSamplingSession(tx, {
      sessionId: client.sessionId,
      seq,
      entityId: session?.entityId ?? row.entityId,
      baseModel: client.baseModel,
      modelId: client.modelId,
      checkpointId,
      modelPath: path,
    })) ?? (await repo.findSamplingSessionBySeq(tx, client.sessionId, seq));
  return { path, sampling_session_id: created?.id ?? null };
}

/** Deletes a save's row (and its checkpoint); its files go once the transaction has committed. */
export async function dropSaved(tx: DbOrTx, saved: repo.TinkerWeightsRow, after: AfterCommit): Promise<void> {
  if (saved.checkpointId) {
    const checkpoint = await modelsRepo.findCheckpoint(tx, saved.modelId, saved.checkpointId);
    if (checkpoint) await modelsRepo.deleteCheckpointsBySteps(tx, saved.modelId, [checkpoint.step]);
    after.changedModels.add(saved.modelId);
  }
  await repo.deleteWeights(tx, saved.id);
  after.deleteKeys.push(saved.prefix);
}
