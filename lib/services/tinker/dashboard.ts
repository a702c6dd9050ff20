import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as repo from '@/lib/db/repositories/tinker';
import type {
  ModelTinkerDto,
  TinkerRequestSummaryDto,
  TinkerSavedWeightsDto,
  TinkerTrainingClientDto,
} from '@/lib/schemas/tinker-clients';
import { accessibleEntityIds, listScope, type Principal } from '../accounts';
import { waitingReasons } from './futures';
import { tinkerPath } from './weights-files';

/** Tinker training clients as the dashboard shows them (Jobs, Workers and model pages). */

function clientDto(
  c: repo.TrainingClientWithModel,
  open: { queued: number; running: number } | undefined,
  sdkVersion: string | null,
  waitingReason: string | null,
): TinkerTrainingClientDto {
  const lora = c.lora as Record<string, unknown>;
  return {
    model_id: c.modelId,
    entity: c.entityName,
    project: c.projectName,
    model_name: c.modelName,
    base_model: c.baseModel,
    status: c.status,
    worker_id: c.workerId,
    waiting_reason: waitingReason,
    lora: {
      rank: Number(lora.rank ?? 0),
      alpha: Number(lora.alpha ?? 0),
      train_mlp: Boolean(lora.train_mlp),
      train_attn: Boolean(lora.train_attn),
      train_unembed: Boolean(lora.train_unembed),
    },
    optim_steps: c.optimSteps,
    queued_requests: open?.queued ?? 0,
    running_requests: open?.running ?? 0,
    error: c.error,
    error_category: c.errorCategory,
    sdk_version: sdkVersion,
    created_at: c.createdAt.toISOString(),
    last_request_at: c.lastRequestAt.toISOString(),
    ended_at: c.endedAt?.toISOString() ?? null,
  };
}

async function toDtos(rows: repo.TrainingClientWithModel[]): Promise<TinkerTrainingClientDto[]> {
  const db = await getDb();
  const counts = await repo.openRequestCounts(
    db,
    rows.map((r) => r.modelId),
  );
  const versions = new Map<string, string | null>();
  for (const id of new Set(rows.map((r) => r.sessionId)))
    versions.set(id, (await repo.findSession(db, id))?.sdkVersion ?? null);
  // Only a client no worker has taken yet waits for one; one whose create_model a worker took is loading there.
  const unclaimed = (r: repo.TrainingClientWithModel) => r.status === 'waiting' && r.workerId === null;
  const reasonFor = await waitingReasons([...new Set(rows.filter(unclaimed).map((r) => r.baseModel))]);
  return rows.map((r) =>
    clientDto(
      r,
      counts.get(r.modelId),
      versions.get(r.sessionId) ?? null,
      unclaimed(r) ? reasonFor(r.baseModel) : null,
    ),
  );
}

/** Training clients of the caller's entities (or of `entity`), live ones first. */
export async function listTrainingClients(principal: Principal, q: { entity?: string; live?: boolean; limit: number }) {
  const rows = await repo.listTrainingClients(await getDb(), {
    entityIds: listScope(principal, q.entity),
    live: q.live,
    limit: q.limit,
  });
  return { data: await toDtos(rows) };
}

function requestDto(r: repo.TinkerRequestRow): TinkerRequestSummaryDto {
  return {
    id: r.id,
    kind: r.kind,
    seq_id: r.seqId,
    status: r.status,
    error: r.error,
    error_category: r.errorCategory,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

/** A model's training client with its latest requests and its saved weights; 404 for a model that is not one. */
export async function modelTinker(principal: Principal, modelId: string): Promise<ModelTinkerDto> {
  const db = await getDb();
  const [client] = await repo.listTrainingClients(db, { entityIds: accessibleEntityIds(principal), modelId, limit: 1 });
  if (!client) throw ApiError.notFound('This model is not a Tinker training client');
  const [dto] = await toDtos([client]);
  const requests = await repo.recentRequestsOfModel(db, modelId, 50);
  const saved = await repo.listWeightsOfModel(db, modelId);
  const steps = new Map<string, number>();
  for (const w of saved) {
    if (!w.checkpointId) continue;
    const checkpoint = await modelsRepo.findCheckpoint(db, modelId, w.checkpointId);
    if (checkpoint) steps.set(w.id, checkpoint.step);
  }
  return {
    training_client: dto,
    requests: requests.map(requestDto),
    saved: saved.map((w): TinkerSavedWeightsDto => ({
      kind: w.kind,
      name: w.name,
      tinker_path: tinkerPath(w.modelId, w.kind, w.name),
      step: steps.get(w.id) ?? null,
      size_bytes: w.sizeBytes,
      ephemeral: w.ephemeral > 0,
      created_at: w.createdAt.toISOString(),
      expires_at: w.expiresAt?.toISOString() ?? null,
    })),
  };
}
