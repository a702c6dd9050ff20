import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as repo from '@/lib/db/repositories/tinker';
import type { TinkerRequestKind } from '@/lib/db/schema';
import { config } from '@/lib/config';
import { liveWorkers } from '../training-workers';
import { accessibleEntityIds, entityByName, type Principal } from '../accounts';
import { hfModelDir } from '../base-models';
import { findBaseModel, trainableBaseModelIds, type BaseModel } from '@/lib/catalog/base-models';
import { newRunId } from '../credentials';
import { NEW_CLIENT_KEY, wake, workerKey } from '@/lib/jobs/server/tinker-wakeups';

/**
 * Tinker sessions and training clients, and the submission of their requests (docs/tinker.md §2.2–2.3). A training
 * client is a Tuneboard model whose LoRA state lives on one Python worker; every call on it becomes a row of
 * `tinker_requests` that the worker takes in seq_id order (lib/services/tinker/worker-queue.ts) and whose result
 * the SDK fetches with retrieve_future (futures.ts).
 */

/** LoRA scale α/r with α fixed at 32, as "LoRA Without Regret" (docs/tinker.md §2.7). */
export const LORA_ALPHA = 32;
export const MAX_LORA_RANK = 512;
/** The project a session's models go to when the SDK names none. */
export const DEFAULT_PROJECT = 'tinker';

export const TRAINING_CLIENT_NOT_FOUND = 'Training client not found';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids of this server are UUIDs: anything else names nothing (and must not reach a uuid column as text). */
export const isUuid = (id: string) => UUID.test(id);

// ---------------------------------------------------------------------------------------------------------------
// Sessions

/**
 * The SDK's project_id: `project` (in the caller's personal entity) or `entity/project` (a team it belongs to);
 * absent: the project `tinker` of the personal entity.
 */
function resolveProject(principal: Principal, projectId: string | null | undefined) {
  if (!projectId) return { entity: principal.personalEntity, project: DEFAULT_PROJECT };
  const parts = projectId.split('/');
  const valid = (s: string) => /^[A-Za-z0-9._-]{1,128}$/.test(s);
  if (parts.length === 1 && valid(parts[0])) return { entity: principal.personalEntity, project: parts[0] };
  if (parts.length === 2 && valid(parts[1])) {
    const entity = entityByName(principal, parts[0]);
    if (!entity) {
      throw new ApiError(
        'bad_request',
        `project_id ${JSON.stringify(projectId)}: this API key's user is not a member of '${parts[0]}'`,
      );
    }
    return { entity, project: parts[1] };
  }
  throw new ApiError(
    'bad_request',
    `project_id ${JSON.stringify(projectId)} must be 'project' or 'entity/project' (letters, digits, '.', '_', '-')`,
  );
}

export async function createSession(
  principal: Principal,
  body: {
    sdk_version: string;
    tags: string[];
    user_metadata?: Record<string, unknown> | null;
    project_id?: string | null;
  },
) {
  const db = await getDb();
  const { entity, project } = resolveProject(principal, body.project_id);
  const projectRow = await modelsRepo.findOrCreateProject(db, entity.id, project);
  const session = await repo.insertSession(db, {
    entityId: entity.id,
    userId: principal.userId,
    projectId: projectRow.id,
    sdkVersion: body.sdk_version.slice(0, 64),
    tags: body.tags.slice(0, 64).map((t) => t.slice(0, 200)),
    userMetadata: body.user_metadata ?? null,
  });
  return {
    type: 'create_session' as const,
    session_id: session.id,
    info_message: `Tuneboard: models of this session go to ${entity.name}/${project}`,
  };
}

/** A session of the caller's, open; 404 otherwise (existence does not leak across entities). */
async function requireOpenSession(principal: Principal, sessionId: string): Promise<repo.TinkerSessionRow> {
  const session = isUuid(sessionId) ? await repo.findSession(await getDb(), sessionId) : undefined;
  if (!session || !accessibleEntityIds(principal).includes(session.entityId))
    throw ApiError.notFound('Session not found');
  if (session.endedAt) {
    throw new ApiError(
      'bad_request',
      `Session ${sessionId} ended at ${session.endedAt.toISOString()} (no heartbeat for ${Math.round(config.tinkerSessionMs / 60_000)} minutes); create a new ServiceClient`,
    );
  }
  return session;
}

export async function sessionHeartbeat(principal: Principal, sessionId: string) {
  await requireOpenSession(principal, sessionId);
  await repo.touchSession(await getDb(), sessionId, new Date());
  return { type: 'session_heartbeat' as const };
}

// ---------------------------------------------------------------------------------------------------------------
// Training clients

export interface LoraRequest {
  rank: number;
  seed?: number | null;
  train_mlp?: boolean;
  train_attn?: boolean;
  train_unembed?: boolean;
}

/** A base model the Python worker can train: an `hf` entry of the base-models file. */
export function requireTrainableBase(id: string): BaseModel {
  const base = findBaseModel(id);
  if (!base || base.backend !== 'hf') {
    const hf = trainableBaseModelIds({ backends: ['hf'] });
    throw new ApiError(
      'bad_request',
      base
        ? `Base model ${id} is a ${base.backend} model; Tinker training clients train Hugging Face ("hf") base models on the Python worker${hf.length ? `: ${hf.join(', ')}` : ''}`
        : `Unknown base model ${id}. ${hf.length ? `Base models this server can train: ${hf.join(', ')}` : 'This server has no "hf" base model in its base-models file (TUNEBOARD_BASE_MODELS_FILE)'}`,
    );
  }
  return base;
}

function resolveLora(lora: LoraRequest | null | undefined) {
  const rank = lora?.rank ?? 32;
  if (!Number.isInteger(rank) || rank < 1 || rank > MAX_LORA_RANK) {
    throw new ApiError('bad_request', `lora_config.rank must be an integer from 1 to ${MAX_LORA_RANK}`);
  }
  const resolved = {
    rank,
    alpha: LORA_ALPHA,
    seed: lora?.seed ?? null,
    train_mlp: lora?.train_mlp ?? true,
    train_attn: lora?.train_attn ?? true,
    train_unembed: lora?.train_unembed ?? true,
  };
  if (!resolved.train_mlp && !resolved.train_attn && !resolved.train_unembed) {
    throw new ApiError(
      'bad_request',
      'lora_config: at least one of train_mlp, train_attn and train_unembed must be true',
    );
  }
  return resolved;
}

/**
 * `create_model`: a new model in the session's project and a training client waiting for a worker; the future
 * resolves once a worker has loaded the base model and created the adapter. A resent create (same session and
 * model_seq_id) answers the first one's future.
 */
export async function createTrainingClient(
  principal: Principal,
  body: {
    session_id: string;
    model_seq_id: number;
    base_model: string;
    user_metadata?: Record<string, unknown> | null;
    lora_config?: LoraRequest | null;
  },
) {
  const db = await getDb();
  const session = await requireOpenSession(principal, body.session_id);
  const existing = await repo.findTrainingClientBySessionSeq(db, session.id, body.model_seq_id);
  if (existing) {
    const first = await repo.findDuplicateRequest(db, {
      entityId: session.entityId,
      idempotencyKey: createKey(existing.modelId),
      seqId: null,
    });
    if (first) return { request_id: first.id, model_id: existing.modelId };
  }
  const base = requireTrainableBase(body.base_model);
  const lora = resolveLora(body.lora_config);
  const project = await repo.findProject(db, session.projectId);
  if (!project) throw ApiError.notFound('The project of this session was deleted');
  const tail = base.id
    .split('/')
    .at(-1)!
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 60);
  const name = `${tail}-${session.id.slice(0, 8)}-${body.model_seq_id}`;
  const request = await db.transaction(async (tx) => {
    const modelId = await modelsRepo.createModelRows(tx, {
      entityId: session.entityId,
      project: project.name,
      name,
      baseModel: base.id,
      runId: newRunId(),
    });
    if (modelId === null) {
      throw new ApiError('conflict', `A model named ${name} already exists in this project; retry`);
    }
    await repo.insertTrainingClient(tx, {
      modelId,
      sessionId: session.id,
      modelSeqId: body.model_seq_id,
      baseModel: base.id,
      lora,
      status: 'waiting',
      userMetadata: body.user_metadata ?? null,
    });
    const row = await repo.insertRequest(tx, {
      entityId: session.entityId,
      modelId,
      seqId: null,
      kind: 'create_model',
      // Found again by this key when the SDK resends the create (its answer was lost).
      idempotencyKey: createKey(modelId),
      payload: { base_model: base.id, base_model_path: base.path ?? null, lora },
    });
    if (!row) throw new Error('create_model request was not stored');
    return row;
  });
  await wake(NEW_CLIENT_KEY);
  return { request_id: request.id, model_id: request.modelId! };
}

const createKey = (modelId: string) => `create_model:${modelId}`;

/** A training client of the caller's (404 otherwise), for reading. */
export async function requireTrainingClient(principal: Principal, modelId: string) {
  const client = isUuid(modelId) ? await repo.findTrainingClient(await getDb(), modelId) : undefined;
  if (!client || !accessibleEntityIds(principal).includes(client.entityId)) {
    throw ApiError.notFound(`${TRAINING_CLIENT_NOT_FOUND}: ${modelId}`);
  }
  return client;
}

/** Why a training client takes no more requests, in words a user can act on; null while it is usable. */
export function unusableReason(client: repo.TrainingClientRow): string | null {
  if (client.status === 'failed') return `Training client ${client.modelId} failed: ${client.error ?? 'unknown error'}`;
  if (client.status === 'closed') {
    return `Training client ${client.modelId} is closed${client.error ? ` (${client.error})` : ''}; load its last saved state into a new one (create_training_client_from_state)`;
  }
  return null;
}

export async function getInfo(principal: Principal, modelId: string) {
  const client = await requireTrainingClient(principal, modelId);
  const base = findBaseModel(client.baseModel);
  const dir = base ? hfModelDir(base) : undefined;
  return {
    type: 'get_info' as const,
    model_id: client.modelId,
    model_name: client.baseModel,
    is_lora: true,
    lora_rank: Number((client.lora as { rank?: number }).rank ?? 0),
    model_data: {
      arch: dir ? architectureOf(dir) : null,
      model_name: client.baseModel,
      // What the SDK hands AutoTokenizer.from_pretrained: the model's directory where the base-models file gives
      // one (a client on this machine loads it as it is), else the Hub id (docs/tinker.md §1).
      tokenizer_id: dir ?? client.baseModel,
    },
  };
}

function architectureOf(dir: string): string | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as { model_type?: unknown };
    return typeof parsed.model_type === 'string' ? parsed.model_type : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Requests on a training client

export interface Submission {
  kind: Exclude<TinkerRequestKind, 'create_model' | 'sample'>;
  modelId: string;
  seqId: number | null;
  idempotencyKey: string | null;
  payload: Record<string, unknown>;
}

/**
 * Queues a request on a training client (docs/tinker.md §2.3): it runs after every lower seq_id, exactly once. A
 * resent request (same model and seq_id, or same idempotency key) answers the first one's future.
 */
export async function submit(principal: Principal, s: Submission): Promise<{ request_id: string; model_id: string }> {
  const db = await getDb();
  const notFound = () => ApiError.notFound(`${TRAINING_CLIENT_NOT_FOUND}: ${s.modelId}`);
  if (!isUuid(s.modelId)) throw notFound();
  // Four statements in all (BEGIN, lock, insert, COMMIT): a submission is on the path from submit to result, where
  // each round trip to the database counts. A resend (same model and seq_id, or same idempotency key) is found by the
  // insert's conflict, or before refusing a seq_id that already ran or a client that can no longer take requests.
  const stored = await db.transaction(async (tx) => {
    const locked = await repo.lockTrainingClientForRequest(tx, s.modelId, new Date());
    if (!locked || !accessibleEntityIds(principal).includes(locked.entityId)) throw notFound();
    const lookup = {
      entityId: locked.entityId,
      idempotencyKey: s.idempotencyKey,
      modelId: locked.modelId,
      seqId: s.seqId,
    };
    const reason = unusableReason(locked);
    let seq = s.seqId;
    const assigned = seq === null;
    if (reason || (seq !== null && seq < locked.nextSeq)) {
      const duplicate = await repo.findDuplicateRequest(tx, lookup);
      if (duplicate) return { duplicate };
      if (reason) throw new ApiError('bad_request', reason);
      throw new ApiError(
        'bad_request',
        `seq_id ${seq} of training client ${locked.modelId} is behind the next one it runs (${locked.nextSeq}): it was skipped or used by a request that no longer exists`,
      );
    }
    if (seq === null) {
      // Without a seq_id, a resend is known by its idempotency key alone.
      const duplicate = s.idempotencyKey ? await repo.findDuplicateRequest(tx, lookup) : undefined;
      if (duplicate) return { duplicate };
      seq = Math.max(locked.nextSeq, (await repo.highestSeq(tx, locked.modelId)) + 1);
    }
    const row = await repo.insertRequest(tx, {
      entityId: locked.entityId,
      modelId: locked.modelId,
      seqId: seq,
      seqAssigned: assigned ? 1 : 0,
      kind: s.kind,
      idempotencyKey: s.idempotencyKey,
      payload: s.payload,
    });
    return { row, workerId: locked.workerId, entityId: locked.entityId };
  });
  if ('duplicate' in stored) return sameRequest(stored.duplicate!, s);
  if (!stored.row) {
    // A resend (or a concurrent one) won the insert: answer its future.
    const winner = await repo.findDuplicateRequest(db, {
      entityId: stored.entityId,
      idempotencyKey: s.idempotencyKey,
      modelId: s.modelId,
      seqId: s.seqId,
    });
    if (!winner) throw new Error('request conflicted but no duplicate was found');
    return sameRequest(winner, s);
  }
  if (stored.workerId) await wake(workerKey(stored.workerId));
  return { request_id: stored.row.id, model_id: s.modelId };
}

function sameRequest(row: repo.TinkerRequestRow, s: Submission) {
  if (row.seqAssigned && s.seqId !== null) {
    // docs/tinker.md §2.3: a request sent without seq_id takes the next one; a later explicit seq_id equal to it is
    // another request, not a resend of that one.
    throw new ApiError(
      'bad_request',
      `seq_id ${s.seqId} of training client ${row.modelId} was already given to a ${row.kind} request sent without a seq_id; send the requests of one training client all with seq_id or all without`,
    );
  }
  if (row.kind !== s.kind) {
    throw new ApiError(
      'bad_request',
      `seq_id ${row.seqId} of training client ${row.modelId} was already used by a ${row.kind} request; this is a ${s.kind}`,
    );
  }
  return { request_id: row.id, model_id: row.modelId! };
}

/**
 * A request refused at submission still uses up its seq_id (docs/tinker.md §2.3): stored as failed, so that the
 * requests after it do not wait for it. Only for a training client of the caller's and a seq_id not yet seen.
 */
export async function recordRefused(
  principal: Principal,
  s: { kind: Submission['kind']; modelId: string; seqId: number | null },
  message: string,
): Promise<void> {
  if (s.seqId === null || !Number.isInteger(s.seqId) || s.seqId < 1 || s.seqId > 2 ** 31 - 1) return;
  if (!isUuid(s.modelId)) return;
  const db = await getDb();
  const client = await repo.findTrainingClient(db, s.modelId).catch(() => undefined);
  if (!client || !accessibleEntityIds(principal).includes(client.entityId) || s.seqId < client.nextSeq) return;
  const now = new Date();
  await repo.insertRequest(db, {
    entityId: client.entityId,
    modelId: client.modelId,
    seqId: s.seqId,
    kind: s.kind,
    status: 'failed',
    error: message.slice(0, 2000),
    errorCategory: 'user',
    finishedAt: now,
  });
  if (s.seqId === client.nextSeq) {
    // It was the one the worker waits for: move on at once.
    await db.transaction(async (tx) => {
      const locked = await repo.lockTrainingClient(tx, client.modelId);
      if (locked && locked.nextSeq === s.seqId) await advanceAfter(tx, locked.modelId, s.seqId!);
    });
    if (client.workerId) await wake(workerKey(client.workerId));
  }
}

/**
 * Moves a training client's next_seq past `seq` and past every later seq_id that already failed at submission, so
 * that the worker's next poll finds the next request that can run.
 */
export async function advanceAfter(tx: Parameters<typeof repo.updateTrainingClient>[0], modelId: string, seq: number) {
  await repo.updateTrainingClient(tx, modelId, { nextSeq: repo.nextSeqAfter(modelId, seq), gapSince: null });
}

// ---------------------------------------------------------------------------------------------------------------
// Capabilities

/**
 * The base models of the base-models file that a connected worker can train with training clients: hf models,
 * filtered by each connected worker's declared base models (docs/tinker.md §1).
 */
export async function serverCapabilities(contextLengths: Map<string, number | null>) {
  const workers = await liveWorkers();
  const ids = new Set<string>();
  for (const w of workers) {
    const caps = w.capabilities as { backends?: string[]; base_models?: string[]; kinds?: string[] };
    if (!caps.backends?.includes('hf')) continue;
    if (caps.kinds && !caps.kinds.includes('tinker')) continue;
    for (const id of trainableBaseModelIds({ backends: ['hf'], base_models: caps.base_models })) ids.add(id);
  }
  return {
    supported_models: [...ids].map((id) => ({ model_name: id, max_context_length: contextLengths.get(id) ?? null })),
  };
}

/**
 * The SDK's feature flags (docs/tinker.md §2.1): plain API keys (no JWT exchange), httpx's own transport (pyqwest is
 * not installed with the SDK's dependencies everywhere), JSON forward_backward bodies for SDK ≤ 0.24
 * (`proto_write_fwdbwd` off) and zstd-compressed protobuf for 0.25, which always writes protobuf. Chunks of up to
 * 1,024 datums or 5 MB, as Thinking Machines' service; at most 256 samples in flight per sampling client, which a CPU
 * engine cannot overtake anyway.
 */
export function clientConfig() {
  return {
    pjwt_auth_enabled: false,
    credential_default_source: 'api_key',
    sample_dispatch_bytes_semaphore_size: 10 * 1024 * 1024,
    inflight_response_bytes_semaphore_size: 50 * 1024 * 1024,
    parallel_fwdbwd_chunks: true,
    proto_write_fwdbwd: false,
    proto_compress_fwdbwd: true,
    fwd_via_fwdbwd: false,
    fwdbwd_max_chunk_len: 1024,
    fwdbwd_max_chunk_bytes_count: 5_000_000,
    fwdbwd_dispatch_bytes_semaphore_size: 50_000_000,
    billing_exception_max_pause_duration_sec: 3600,
    sample_no_retries: false,
    sample_enable_stuck_detection: true,
    sample_max_concurrent_requests: 256,
    use_pyqwest_transport: false,
    create_model_via_load_weights: false,
  };
}
