import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { toList, type ListEnvelope } from '@/lib/schemas/common';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';
import { deleteArtifacts } from '@/lib/storage';
import { accessibleEntityIds, type Principal } from './accounts';
import { MODEL_NOT_FOUND, requireModel, toCheckpointDto } from './models';
import { requirePermission } from './permissions';
import { modelsChanged } from './served-models';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('checkpoints');

export async function listCheckpoints(
  principal: Principal,
  modelId: string,
  q: { after?: string; limit: number; order: 'asc' | 'desc' },
): Promise<ListEnvelope<CheckpointDto>> {
  // Scope check, cursor and page in one query: this is the route clients poll.
  const page = await modelsRepo.pageCheckpointsInScope(await getDb(), {
    modelId,
    entityIds: accessibleEntityIds(principal),
    afterId: q.after,
    order: q.order,
    // One row past the page tells whether more exist without a count query.
    limit: q.limit + 1,
  });
  if (page.kind === 'no_model') throw ApiError.notFound(MODEL_NOT_FOUND);
  if (page.kind === 'unknown_cursor') throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
  return toList(page.rows.slice(0, q.limit).map(toCheckpointDto), page.rows.length > q.limit);
}

/** Deletes the listed steps; idempotent, duplicates count once, missing steps are reported in order (docs/contract.md §2.4). */
export async function deleteCheckpoints(principal: Principal, modelId: string, steps: number[]) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  requirePermission(principal, model.entityId, 'delete_checkpoints');
  const unique = [...new Set(steps)];
  const deleted = await modelsRepo.deleteCheckpointsBySteps(db, model.id, unique);
  if (deleted.length > 0) await modelsChanged([model.id]);
  const deletedSteps = new Set(deleted.map((d) => d.step));
  for (const row of deleted) {
    // The rows are gone already; a file the store cannot remove now is swept later, never a failed delete.
    if (row.artifactKey) {
      await deleteArtifacts(row.artifactKey).catch((err) =>
        log.warn({ key: row.artifactKey, err: (err as Error).message }, 'checkpoint file left for the orphan sweep'),
      );
    }
  }
  return { deleted_count: deleted.length, not_found_steps: unique.filter((s) => !deletedSteps.has(s)) };
}
