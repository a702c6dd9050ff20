import 'server-only';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as tinkerRepo from '@/lib/db/repositories/tinker';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { TrainingJobRow } from '@/lib/db/repositories/training';
import * as workersRepo from '@/lib/db/repositories/training-workers';
import { LEASE_SECONDS } from '@/lib/jobs/server/queue';
import type { TrainingWorkerDto } from '@/lib/schemas/workers';
import { accessibleEntityIds, type Principal } from './accounts';
import { allBaseModels, canTrain, type WorkerCapabilities } from '@/lib/catalog/base-models';

/**
 * The worker registry as the product shows it: which workers are connected and what they can train and run,
 * and for a queued job, why it is still waiting.
 */

/**
 * A worker counts as connected when it was seen within this window. Idle workers poll every few seconds and
 * busy ones heart-beat several times per lease, so one lease (at least 30 s) never misses a live one.
 */
export const liveWindowMs = () => Math.max(30, LEASE_SECONDS()) * 1000;

function capabilitiesOf(row: workersRepo.TrainingWorkerRow): WorkerCapabilities {
  const c = row.capabilities as Partial<WorkerCapabilities>;
  return {
    backends: Array.isArray(c.backends) ? c.backends : ['builtin'],
    ...(Array.isArray(c.base_models) ? { base_models: c.base_models } : {}),
    kinds: Array.isArray(c.kinds) ? c.kinds : ['rl', 'sft'],
    ...(Array.isArray(c.model_ids) ? { model_ids: c.model_ids } : {}),
  };
}

/** The workers seen within liveWindowMs. */
export async function liveWorkers() {
  return workersRepo.listWorkersSeenSince(await getDb(), new Date(Date.now() - liveWindowMs()));
}

/** The Tinker training clients each worker holds (a worker holding any claims no job: docs/tinker.md §3.2). */
async function heldClients(workers: workersRepo.TrainingWorkerRow[]) {
  const rows = await tinkerRepo.liveClientsByWorker(
    await getDb(),
    workers.map((w) => w.id),
  );
  const byWorker = new Map<string, { modelId: string; baseModel: string }[]>();
  for (const r of rows) {
    if (!r.workerId) continue;
    const list = byWorker.get(r.workerId) ?? [];
    list.push({ modelId: r.modelId, baseModel: r.baseModel });
    byWorker.set(r.workerId, list);
  }
  return byWorker;
}

/** Connected workers. The job a worker runs is named only when the caller can see that job. */
export async function listConnectedWorkers(principal: Principal): Promise<{ data: TrainingWorkerDto[] }> {
  const db = await getDb();
  const rows = await liveWorkers();
  const scope = accessibleEntityIds(principal);
  const held = await heldClients(rows);
  // The held clients' models the caller can see, by id, with their names.
  const visible = new Map(
    (
      await modelsRepo.findModelsInScope(
        db,
        [...held.values()].flat().map((c) => c.modelId),
        scope,
      )
    ).map((m) => [m.id, m.name]),
  );
  const data = await Promise.all(
    rows.map(async (row): Promise<TrainingWorkerDto> => {
      const caps = capabilitiesOf(row);
      const job = row.currentJobId ? await trainingRepo.findJobInScope(db, row.currentJobId, scope) : undefined;
      const model = job ? await modelsRepo.findModelById(db, job.modelId) : undefined;
      return {
        id: row.id,
        backends: caps.backends,
        base_models: caps.base_models ?? null,
        kinds: caps.kinds,
        info: row.info,
        status: row.currentJobId || held.has(row.id) ? 'busy' : 'idle',
        training_clients: (held.get(row.id) ?? []).map((c) => ({
          model_id: visible.has(c.modelId) ? c.modelId : null,
          model_name: visible.get(c.modelId) ?? null,
          base_model: c.baseModel,
        })),
        current_job_id: job?.id ?? null,
        current_base_model: model?.baseModel ?? null,
        first_seen_at: row.firstSeenAt.toISOString(),
        last_seen_at: row.lastSeenAt.toISOString(),
      };
    }),
  );
  return { data };
}

/**
 * Why a QUEUED job has not started, in words a user can act on; null for jobs that are not queued. Computed
 * from the live registry, so it changes as workers come and go.
 */
export async function waitingReason(
  job: TrainingJobRow,
  registry?: { workers: workersRepo.TrainingWorkerRow[]; held: Awaited<ReturnType<typeof heldClients>> },
): Promise<string | null> {
  if (job.status !== 'QUEUED') return null;
  const db = await getDb();
  const model = await modelsRepo.findModelById(db, job.modelId);
  if (!model) return null;
  const entry = allBaseModels().find((m) => m.id === model.baseModel);
  if (!entry) return `No worker can train ${model.baseModel}: it is no longer in the base-models file`;
  if (entry.backend === 'upstream') {
    return `No worker can train ${model.baseModel}: it is served by an upstream server only (backend "upstream")`;
  }
  const live = registry?.workers ?? (await liveWorkers());
  const capable = live.filter((w) =>
    canTrain(capabilitiesOf(w), { kind: job.kind, modelId: job.modelId, baseModel: model.baseModel }),
  );
  if (capable.length === 0) {
    const how =
      entry.backend === 'hf'
        ? 'start a Python worker (tuneboard-worker) that can reach this model'
        : "the server's built-in runner is off or not running (TUNEBOARD_RUNNER_CONCURRENCY)";
    return `Waiting for a worker that can train ${model.baseModel} (${job.kind.toUpperCase()}); none is connected: ${how}`;
  }
  const open = await trainingRepo.openJobsOfModel(db, job.modelId);
  const before = (j: TrainingJobRow) =>
    j.createdAt.getTime() < job.createdAt.getTime() ||
    (j.createdAt.getTime() === job.createdAt.getTime() && j.id < job.id);
  const earlier = open.some((j) => j.id !== job.id && (j.status === 'RUNNING' || before(j)));
  if (earlier) return 'Waiting for an earlier job of this model to finish (jobs of one model run one at a time)';
  const tinker = registry?.held ?? (await heldClients(capable));
  if (capable.every((w) => w.currentJobId !== null || tinker.has(w.id))) {
    const holding = capable.filter((w) => w.currentJobId === null && tinker.has(w.id)).length;
    return `Waiting for a free worker: ${capable.length} connected worker${capable.length === 1 ? ' that can train' : 's that can train'} ${model.baseModel} ${capable.length === 1 ? 'is' : 'are'} busy${holding ? ` (${holding} holding Tinker training clients, which take no jobs until they are closed)` : ''}`;
  }
  return 'Waiting for a worker to pick it up';
}

/** waitingReason for many jobs with one registry read. */
export async function waitingReasons(jobs: TrainingJobRow[]): Promise<(string | null)[]> {
  if (!jobs.some((j) => j.status === 'QUEUED')) return jobs.map(() => null);
  // The registry read once for every job: the workers, and the training clients they hold.
  const workers = await liveWorkers();
  const registry = { workers, held: await heldClients(workers) };
  return Promise.all(jobs.map((j) => waitingReason(j, registry)));
}
