import 'server-only';
import { getDb } from '@/lib/db/client';
import { componentLogger } from '@/lib/logger';
import * as artifactsRepo from '@/lib/db/repositories/artifacts';
import * as modelsRepo from '@/lib/db/repositories/models';
import { artifactAgeMs, deleteArtifacts, listArtifacts, sweepTempFiles } from '@/lib/storage';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const log = componentLogger('storage');

/** A dataset folder without its row may be an upload in progress (the row is written last): an hour is long enough. */
const DATASET_MIN_AGE_MS = 3_600_000;
/**
 * A `.tmp-` file's age is the time since its last byte was written, so one untouched this long belongs to a write
 * that died (a crash, a client gone mid-upload), not to a slow one still arriving: request bodies must keep arriving
 * well within this (lib/api).
 */
const TEMP_MIN_AGE_MS = 10 * 60_000;
/** How often a running server sweeps: an abandoned upload's partial file is gone within about twice this. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Removes files that no database row points to any more: the folders of deleted models (a model's row
 * exists before any of its files, so a folder without one is an orphan), dataset folders that no version
 * references and that are older than `minAgeMs` (younger ones may be uploads in progress, whose row is
 * written last), and temporary files a crash left mid-write. Rows are always deleted before files, so the
 * sweep never needs to remove a row. Runs at server start; safe to run at any time, from any instance.
 */
export async function sweepOrphanArtifacts(opts: { minAgeMs?: number; tempMinAgeMs?: number } = {}) {
  const minAgeMs = opts.minAgeMs ?? DATASET_MIN_AGE_MS;
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
  const tempFiles = await sweepTempFiles(opts.tempMinAgeMs ?? Math.min(minAgeMs, TEMP_MIN_AGE_MS));
  return { models, datasets, tempFiles };
}

let sweeper: NodeJS.Timeout | undefined;

/**
 * Sweeps at start and then every `intervalMs` while the server runs. Once only at start, a partial upload a crash or
 * a vanished client left behind stayed until the next restart, and only if it was an hour old by then.
 */
export function startArtifactSweeper(opts: { intervalMs?: number; tempMinAgeMs?: number } = {}): () => void {
  stopArtifactSweeper();
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const swept = await sweepOrphanArtifacts({ tempMinAgeMs: opts.tempMinAgeMs });
      if (swept.models + swept.datasets + swept.tempFiles > 0) log.info({ swept }, 'orphan artifacts removed');
    } catch (err) {
      log.error({ err }, 'orphan sweep failed');
    } finally {
      running = false;
    }
  };
  void sweep();
  sweeper = setInterval(() => void sweep(), opts.intervalMs ?? SWEEP_INTERVAL_MS);
  sweeper.unref();
  return stopArtifactSweeper;
}

export function stopArtifactSweeper(): void {
  if (sweeper) clearInterval(sweeper);
  sweeper = undefined;
}
