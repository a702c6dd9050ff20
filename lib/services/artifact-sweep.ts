import 'server-only';
import { getDb } from '@/lib/db/client';
import * as artifactsRepo from '@/lib/db/repositories/artifacts';
import * as modelsRepo from '@/lib/db/repositories/models';
import { artifactAgeMs, deleteArtifacts, listArtifacts, sweepTempFiles } from '@/lib/storage';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Removes files that no database row points to any more: the folders of deleted models (a model's row
 * exists before any of its files, so a folder without one is an orphan), dataset folders that no version
 * references and that are older than `minAgeMs` (younger ones may be uploads in progress, whose row is
 * written last), and temporary files a crash left mid-write. Rows are always deleted before files, so the
 * sweep never needs to remove a row. Runs at server start; safe to run at any time, from any instance.
 */
export async function sweepOrphanArtifacts(opts: { minAgeMs?: number } = {}) {
  const minAgeMs = opts.minAgeMs ?? 3_600_000;
  const db = await getDb();
  let models = 0;
  for (const id of await listArtifacts('models')) {
    if (UUID.test(id) && !(await modelsRepo.findModelById(db, id))) {
      await deleteArtifacts(`models/${id}`);
      models++;
    }
  }
  let datasets = 0;
  for (const id of await listArtifacts('datasets')) {
    const prefix = `datasets/${id}`;
    if (!UUID.test(id) || (await artifactsRepo.prefixInUse(db, prefix))) continue;
    const age = await artifactAgeMs(prefix);
    if (age !== null && age >= minAgeMs) {
      await deleteArtifacts(prefix);
      datasets++;
    }
  }
  const tempFiles = await sweepTempFiles(minAgeMs);
  return { models, datasets, tempFiles };
}
