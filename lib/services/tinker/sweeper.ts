import 'server-only';
import { getDb } from '@/lib/db/client';
import * as repo from '@/lib/db/repositories/tinker';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import { SERVER_RUNNER } from './sampling';
import { NEW_CLIENT_KEY, requestKey, wake, workerKey } from '@/lib/jobs/server/tinker-wakeups';
import { tinkerPath } from './weights-files';
import { afterCommit, dropSaved, failLostClient, runAfterCommit } from './worker-queue';

const log = componentLogger('tinker');

/**
 * The Tinker API's housekeeping, every 10 s on every server process (each step is idempotent, so several processes
 * sweeping one PostgreSQL database is harmless):
 * - training clients whose worker is no longer seen fail, with how to resume (docs/tinker.md §3.2);
 * - sessions silent for TUNEBOARD_TINKER_SESSION_MINUTES end, closing their training clients;
 * - a seq_id that never arrived stops holding up the ones after it after 10 minutes (docs/tinker.md §2.3);
 * - results older than an hour, expired saves and download links are deleted;
 * - sampling requests a dead server process left open fail.
 */

const SWEEP_MS = 10_000;
export const GAP_LIMIT_MS = 10 * 60_000;
const RESULTS_KEPT_MS = 60 * 60_000;
const SAMPLE_LIMIT_MS = 15 * 60_000;

function lostStateMessage(client: repo.TrainingClientRow, saved: repo.TinkerWeightsRow | undefined): string {
  const resume = saved
    ? `resume from its last saved state with ServiceClient.create_training_client_from_state_with_optimizer("${tinkerPath(client.modelId, 'training', saved.name)}")`
    : 'no state of it was saved (save_state), so start a new training client';
  return `The worker ${client.workerId} that held training client ${client.modelId} stopped responding; its state in memory (LoRA weights since the last save, optimizer state, accumulated gradients) is lost: ${resume}`;
}

export async function sweepTinker(now = new Date()): Promise<void> {
  const db = await getDb();
  const woken: string[] = [];

  // Training clients of workers gone silent.
  const lease = Math.max(10, config.jobLeaseSeconds) * 1000;
  for (const client of await repo.clientsOfSilentWorkers(db, new Date(now.getTime() - lease))) {
    if (client.status === 'waiting') {
      // Its create_model had been taken but never answered: nothing is lost yet, another worker may take it.
      await db.transaction(async (tx) => {
        const locked = await repo.lockTrainingClient(tx, client.modelId);
        if (locked?.status !== 'waiting' || locked.workerId !== client.workerId) return;
        await repo.updateTrainingClient(tx, client.modelId, { workerId: null });
        await repo.requeueCreateModel(tx, client.modelId);
      });
      await wake(NEW_CLIENT_KEY);
      continue;
    }
    const saved = (await repo.listWeightsOfModel(db, client.modelId)).find((w) => w.kind === 'training');
    const message = lostStateMessage(client, saved);
    const failed = await failLostClient(client, message);
    log.warn(
      { modelId: client.modelId, worker: client.workerId, failedRequests: failed.length },
      'training client lost with its worker',
    );
    woken.push(...failed.map(requestKey));
  }

  // Sessions gone silent: their training clients close (the worker frees them at its next poll).
  const ended = await repo.endSilentSessions(db, new Date(now.getTime() - config.tinkerSessionMs), now);
  for (const client of await repo.openClientsOfSessions(db, ended)) {
    const reason = `its session ended: no heartbeat for ${Math.round(config.tinkerSessionMs / 60_000)} minutes`;
    const failed = await db.transaction(async (tx) => {
      await repo.updateTrainingClient(tx, client.modelId, { status: 'closed', error: reason, endedAt: now });
      return repo.failOpenRequests(
        tx,
        client.modelId,
        `Training client ${client.modelId} closed: ${reason}`,
        'user',
        now,
      );
    });
    woken.push(...failed.map(requestKey));
    if (client.workerId) woken.push(workerKey(client.workerId));
  }

  // A seq_id that never arrived holds the later ones for GAP_LIMIT_MS at most.
  for (const gap of await repo.clientsWithGaps(db)) {
    if (!gap.gapSince) {
      await repo.updateTrainingClient(db, gap.modelId, { gapSince: now });
    } else if (now.getTime() - gap.gapSince.getTime() > GAP_LIMIT_MS) {
      log.warn(
        { modelId: gap.modelId, missing: `${gap.nextSeq}..${gap.lowest - 1}` },
        'skipping seq_ids that never arrived',
      );
      await repo.updateTrainingClient(db, gap.modelId, { nextSeq: gap.lowest, gapSince: null });
      const client = await repo.findTrainingClient(db, gap.modelId);
      if (client?.workerId) woken.push(workerKey(client.workerId));
    }
  }

  // Sampling requests whose server process died (or that ran far too long).
  for (const row of await repo.staleServerRequests(db, new Date(now.getTime() - SAMPLE_LIMIT_MS))) {
    await repo.updateRequest(db, row.id, {
      status: 'failed',
      error: 'The sampling request did not finish (the server restarted or it ran for over 15 minutes); send it again',
      errorCategory: 'server',
      finishedAt: now,
    });
    woken.push(requestKey(row.id));
  }

  await repo.deleteFinishedRequests(db, new Date(now.getTime() - RESULTS_KEPT_MS));
  await repo.deleteExpiredArchiveLinks(db, now);

  // Saves past their ttl_seconds.
  const after = afterCommit();
  for (const saved of await repo.expiredWeights(db, now)) await db.transaction((tx) => dropSaved(tx, saved, after));
  await runAfterCommit(after);

  if (woken.length) await wake(...woken);
}

/**
 * At start-up with the embedded database this process is the only server: sampling requests a predecessor left
 * running will never finish, so they fail at once instead of after SAMPLE_LIMIT_MS.
 */
async function failOrphanedSamples(): Promise<void> {
  const db = await getDb();
  const now = new Date();
  for (const row of await repo.staleServerRequests(db, now)) {
    if (row.workerId === SERVER_RUNNER) continue;
    await repo.updateRequest(db, row.id, {
      status: 'failed',
      error: 'The server restarted while this sampling request ran; send it again',
      errorCategory: 'server',
      finishedAt: now,
    });
  }
}

let started = false;

export async function startTinkerSweeper(opts: { embeddedDatabase: boolean }): Promise<void> {
  if (started) return;
  started = true;
  if (opts.embeddedDatabase) await failOrphanedSamples().catch((err) => log.error({ err }, 'orphaned samples'));
  const sweep = () => sweepTinker().catch((err) => log.error({ err }, 'tinker sweep failed'));
  await sweep();
  setInterval(() => void sweep(), SWEEP_MS).unref();
}
