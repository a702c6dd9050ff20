import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as repo from '@/lib/db/repositories/tinker';
import { config } from '@/lib/config';
import { liveWorkers } from '../training-workers';
import { accessibleEntityIds, type Principal } from '../accounts';
import { canTrain } from '@/lib/catalog/base-models';
import { isUuid } from './training';
import { listenFor, requestKey } from '@/lib/jobs/server/tinker-wakeups';

/**
 * retrieve_future (docs/tinker.md §2.2): the result of a request, its failure, or — after holding the call open for
 * up to TUNEBOARD_TINKER_WAIT_SECONDS — "try again", with why it waits when no worker can take it.
 */

export type Retrieved =
  | { state: 'done'; kind: repo.TinkerRequestKind; result: Record<string, unknown> }
  | { state: 'failed'; error: string; category: string }
  | { state: 'pending'; queueState: 'active' | 'paused_capacity'; reason: string | null };

export const UNKNOWN_REQUEST =
  'Unknown request_id (results are kept for an hour after a request finishes, and only for its own entity)';

export async function retrieve(principal: Principal, requestId: string, signal?: AbortSignal): Promise<Retrieved> {
  const db = await getDb();
  const deadline = Date.now() + config.tinkerWaitMs;
  // The finished row a worker's answer in this process handed over with its wake-up: no need to read it back.
  let handed: repo.TinkerRequestRow | undefined;
  for (;;) {
    // Listening before the read: a result recorded between the read and the wait still wakes this call.
    const listener = listenFor([requestKey(requestId)]);
    try {
      const found = handed
        ? { request: handed, clientExists: true }
        : isUuid(requestId)
          ? await repo.findRequestAndClient(db, requestId)
          : undefined;
      handed = undefined;
      const row = found?.request;
      if (!row || !accessibleEntityIds(principal).includes(row.entityId)) throw ApiError.notFound(UNKNOWN_REQUEST);
      if (row.status === 'done') return { state: 'done', kind: row.kind, result: row.result ?? {} };
      if (row.status === 'failed') {
        return { state: 'failed', error: row.error ?? 'The request failed', category: row.errorCategory ?? 'unknown' };
      }
      if (row.modelId && !found.clientExists) {
        // Its model was deleted: nothing will ever run it (the row has no foreign key, so that this can be said).
        return { state: 'failed', error: 'The model of this training client was deleted', category: 'user' };
      }
      if (Date.now() >= deadline || signal?.aborted) return { state: 'pending', ...(await whyWaiting(row)) };
      const value = await listener.wait(deadline - Date.now(), signal);
      if (isFinishedRow(value, requestId)) handed = value;
    } finally {
      listener.close();
    }
  }
}

function isFinishedRow(value: unknown, requestId: string): value is repo.TinkerRequestRow {
  const row = value as repo.TinkerRequestRow | undefined;
  return row?.id === requestId && (row.status === 'done' || row.status === 'failed');
}

/**
 * Why a request has not run yet, for the SDK's queue-state log line: no connected worker can train the training
 * client's base model, or none has room for another training client. Otherwise it is simply queued behind earlier
 * requests (active).
 */
async function whyWaiting(
  row: repo.TinkerRequestRow,
): Promise<{ queueState: 'active' | 'paused_capacity'; reason: string | null }> {
  // Only a queued request of a training client still waiting for a worker is paused: a running one is not read.
  if (row.kind === 'sample' || !row.modelId || row.status !== 'queued') return { queueState: 'active', reason: null };
  const client = await repo.findTrainingClient(await getDb(), row.modelId);
  if (!client || client.status !== 'waiting') return { queueState: 'active', reason: null };
  return {
    queueState: 'paused_capacity',
    reason: await waitingReasons([client.baseModel]).then((r) => r(client.baseModel)),
  };
}

/**
 * Why a training client waiting for a worker waits, by base model: no connected worker can train it, or none of
 * those that can has room for another. Reads the workers once for any number of base models (the dashboard's list).
 */
export async function waitingReasons(baseModels: readonly string[]): Promise<(baseModel: string) => string> {
  if (baseModels.length === 0) return () => '';
  const workers = await liveWorkers();
  return (baseModel) => {
    const capable = workers.filter((w) => {
      const caps = w.capabilities as { backends?: ('builtin' | 'hf')[]; base_models?: string[]; kinds?: string[] };
      if (caps.kinds && !caps.kinds.includes('tinker')) return false;
      // A training client is trained like an SFT job of its base model would be: the same backends and base models.
      return canTrain(
        { backends: caps.backends ?? [], base_models: caps.base_models, kinds: ['sft'] },
        { kind: 'sft', modelId: '', baseModel },
      );
    });
    if (capable.length === 0) {
      return `no connected Python worker can train ${baseModel} (start tuneboard-worker pointed at this server, with this base model in reach)`;
    }
    return `waiting for one of ${capable.length} capable worker(s) to have room for another training client (tuneboard-worker --max-training-clients, or memory)`;
  };
}
