import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { toList, type ListEnvelope } from '@/lib/schemas/common';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';
import { deleteArtifacts } from '@/lib/storage';
import type { Principal } from './accounts';
import { requireModel, toCheckpointDto } from './models';
import { requirePermission } from './permissions';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('checkpoints');

export async function listCheckpoints(
  principal: Principal,
  modelId: string,
  q: { after?: string; limit: number; order: 'asc' | 'desc' },
): Promise<ListEnvelope<CheckpointDto>> {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  let afterStep: number | undefined;
  if (q.after !== undefined) {
    const cursor = /^[0-9a-f-]{36}$/i.test(q.after)
      ? await modelsRepo.findCheckpoint(db, model.id, q.after)
      : undefined;
    if (!cursor) throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
    afterStep = cursor.step;
  }
  // One row past the page tells whether more exist without a count query.
  const rows = await modelsRepo.listCheckpoints(db, model.id, { order: q.order, afterStep, limit: q.limit + 1 });
  return toList(rows.slice(0, q.limit).map(toCheckpointDto), rows.length > q.limit);
}

/** Deletes the listed steps; idempotent, duplicates count once, missing steps are reported in order (docs/contract.md §2.4). */
export async function deleteCheckpoints(principal: Principal, modelId: string, steps: number[]) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  requirePermission(principal, model.entityId, 'delete_checkpoints');
  const unique = [...new Set(steps)];
  const deleted = await modelsRepo.deleteCheckpointsBySteps(db, model.id, unique);
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
