import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { ModelWithNames } from '@/lib/db/repositories/models';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';
import type { ListEnvelope } from '@/lib/schemas/common';
import { toList } from '@/lib/schemas/common';
import type { CreateModelBody, ModelDto, ModelSummaryDto } from '@/lib/schemas/models';
import { deleteArtifacts } from '@/lib/storage';
import { requirePermission } from './permissions';
import { accessibleEntityIds, entityByName, isUniqueViolation, listScope, type Principal } from './accounts';
import { availableBaseModels, findAvailableBaseModel } from './base-models';
import { modelListStats } from '@/lib/db/repositories/best-metrics';
import { newRunId } from './credentials';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('models');

export const MODEL_NOT_FOUND = 'Model not found';

export function toModelDto(row: ModelWithNames): ModelDto {
  return {
    id: row.id,
    entity: row.entityName,
    project: row.projectName,
    name: row.name,
    base_model: row.baseModel,
    run_id: row.runId,
  };
}

export function toCheckpointDto(row: modelsRepo.CheckpointRow): CheckpointDto {
  return { id: row.id, step: row.step, metrics: row.metrics, created_at: row.createdAt.toISOString() };
}

/** Loads a model the caller may see, or throws the 404 that a missing one gets. */
export async function requireModel(principal: Principal, modelId: string): Promise<ModelWithNames> {
  const model = await modelsRepo.findModelInScope(await getDb(), modelId, accessibleEntityIds(principal));
  if (!model) throw ApiError.notFound(MODEL_NOT_FOUND);
  return model;
}

export async function createModel(principal: Principal, body: CreateModelBody): Promise<ModelDto> {
  const db = await getDb();
  const entity = body.entity == null ? principal.personalEntity : entityByName(principal, body.entity);
  if (!entity) throw new ApiError('forbidden', `Entity '${body.entity}' is not accessible with this API key`);

  const existing = await modelsRepo.findModelByName(db, entity.id, body.project, body.name);
  if (existing) {
    // return_existing answers with the stored record unchanged, even if base_model differs (docs/contract.md §2.1).
    if (body.return_existing) return toModelDto(existing);
    throw new ApiError('conflict', `Model '${entity.name}/${body.project}/${body.name}' already exists`);
  }
  if (!findAvailableBaseModel(body.base_model)) {
    const names = availableBaseModels().map((m) => m.id);
    throw ApiError.valueError(
      ['body', 'base_model'],
      `Unsupported base model: ${body.base_model}. Available: ${names.join(', ')}`,
      body.base_model,
    );
  }

  try {
    await db.transaction(async (tx) => {
      const project = await modelsRepo.findOrCreateProject(tx, entity.id, body.project);
      await modelsRepo.insertModel(tx, {
        entityId: entity.id,
        projectId: project.id,
        name: body.name,
        baseModel: body.base_model,
        runId: newRunId(),
      });
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent create won the race for this name: behave as if it had been there first.
    const winner = await modelsRepo.findModelByName(db, entity.id, body.project, body.name);
    if (winner && body.return_existing) return toModelDto(winner);
    throw new ApiError('conflict', `Model '${entity.name}/${body.project}/${body.name}' already exists`);
  }
  const created = await modelsRepo.findModelByName(db, entity.id, body.project, body.name);
  return toModelDto(created!);
}

export async function deleteModel(principal: Principal, modelId: string) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  requirePermission(principal, model.entityId, 'delete_model');
  const counts = await db.transaction(async (tx) => {
    if (!(await modelsRepo.lockModel(tx, model.id))) throw ApiError.notFound(MODEL_NOT_FOUND);
    // Open jobs end with a terminal event so that pollers stop cleanly; jobs and events stay readable (docs/contract.md §2.2).
    const now = new Date();
    for (const job of await trainingRepo.openJobsOfModel(tx, model.id)) {
      await trainingRepo.insertEvent(tx, job.id, 'training_failed', { error_message: 'Model was deleted' });
      await trainingRepo.updateJob(tx, job.id, {
        status: 'FAILED',
        errorMessage: 'Model was deleted',
        finishedAt: now,
      });
    }
    return modelsRepo.deleteModelRow(tx, model.id);
  });
  // Rows first, in one transaction: they are what every reader trusts. Files left behind by a failing store
  // are unreachable once the rows are gone, and the orphan sweep removes them (lib/services/artifact-sweep.ts).
  await deleteArtifacts(`models/${model.id}`).catch((err) =>
    log.warn({ modelId: model.id, err: (err as Error).message }, 'files of a deleted model left for the orphan sweep'),
  );
  return { model_id: model.id, deleted_checkpoints: counts.checkpoints, deleted_run: counts.runs > 0 };
}

async function summarise(
  rows: ModelWithNames[],
  best: { metric?: string; direction?: 'max' | 'min' } = {},
): Promise<ModelSummaryDto[]> {
  const stats = await modelListStats(
    await getDb(),
    rows.map((r) => r.id),
    best,
  );
  return rows.map((row) => ({
    ...toModelDto(row),
    created_at: row.createdAt.toISOString(),
    latest_step: stats.get(row.id)?.latest ?? null,
    checkpoint_count: stats.get(row.id)?.count ?? 0,
    best_metric: stats.get(row.id)?.best ?? null,
  }));
}

export async function getModel(principal: Principal, modelId: string): Promise<ModelSummaryDto> {
  const [summary] = await summarise([await requireModel(principal, modelId)]);
  return summary;
}

export async function listModels(
  principal: Principal,
  q: {
    entity?: string;
    project?: string;
    base_model?: string;
    search?: string;
    metric?: string;
    metric_direction?: 'max' | 'min';
    after?: string;
    limit: number;
  },
): Promise<ListEnvelope<ModelSummaryDto>> {
  const db = await getDb();
  const entityIds = listScope(principal, q.entity);
  let after: { createdAt: Date; id: string } | undefined;
  if (q.after !== undefined) {
    const cursor = /^[0-9a-f-]{36}$/i.test(q.after)
      ? await modelsRepo.findModelInScope(db, q.after, entityIds)
      : undefined;
    if (!cursor) throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
    after = { createdAt: cursor.createdAt, id: cursor.id };
  }
  const rows = await modelsRepo.listModels(db, {
    entityIds,
    project: q.project,
    baseModel: q.base_model,
    search: q.search,
    after,
    limit: q.limit + 1,
  });
  const summaries = await summarise(rows.slice(0, q.limit), { metric: q.metric, direction: q.metric_direction });
  return toList(summaries, rows.length > q.limit);
}

export async function listProjects(principal: Principal, entity?: string) {
  const rows = await modelsRepo.listProjects(await getDb(), listScope(principal, entity));
  return {
    object: 'list' as const,
    data: rows.map((r) => ({
      id: r.id,
      entity: r.entityName,
      name: r.name,
      created_at: r.createdAt.toISOString(),
      model_count: r.modelCount,
    })),
  };
}
