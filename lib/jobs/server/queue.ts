import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as queueRepo from '@/lib/db/repositories/job-queue';
import { EVAL_RUNS_CHANNEL, queueAutoEvalRun } from '@/lib/db/repositories/evals';
import { publish } from '@/lib/db/notifications';
import * as modelsRepo from '@/lib/db/repositories/models';
import { appendGradientMarks } from '@/lib/db/repositories/gradient-marks';
import { appendRunPoints, upsertRunMetrics } from '@/lib/db/repositories/run-metrics';
import * as tinkerRepo from '@/lib/db/repositories/tinker';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { TrainingJobRow } from '@/lib/db/repositories/training';
import * as workersRepo from '@/lib/db/repositories/training-workers';
import { allBaseModels, trainableBaseModelIds, type WorkerCapabilities } from '@/lib/services/base-models';
import { modelsChanged } from '@/lib/services/served-models';
import { artifactExists, probeArtifactStore, putArtifact, putArtifactStream, storageFaultMessage } from '@/lib/storage';
import { SftDataError, type SftExample } from '@/lib/schemas/sft-data';
import { holdOutValidation } from '../validation-split';
import { adapterKeys, checkpointKey, type JobInput, type WorkerEvent, type WorkerJob } from '../protocol';
import { config } from '@/lib/config';
import { NEW_CLIENT_KEY, onWake as onTinkerWake } from '@/lib/services/tinker/wakeups';
import { claimsMayPark, listenForClaims, wakeClaims } from './claim-wakeups';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('jobs');

/**
 * The server side of the worker protocol: every state change of a job goes through here, whether the
 * worker is the built-in runner or an external GPU machine. Job status follows the events (docs/contract.md §3.3):
 * RUNNING from claim, COMPLETED exactly with training_ended, FAILED exactly with training_failed.
 */

export const LEASE_SECONDS = () => config.jobLeaseSeconds;
/** A RUNNING job with no new event for this long is failed, even if its worker still heart-beats (docs/contract.md §3.6.5). */
export const IDLE_LIMIT_MS = () => config.jobIdleMs;

export const JOB_NOT_FOUND = 'Training job not found';

const leaseLost = () =>
  new ApiError('conflict', 'This worker no longer holds the job (cancelled, recovered or finished)');

async function requireLease(tx: DbOrTx, jobId: string, workerId: string): Promise<TrainingJobRow> {
  const job = await queueRepo.lockJob(tx, jobId);
  if (!job) throw ApiError.notFound('Training job not found');
  if (job.status !== 'RUNNING' || job.workerId !== workerId) throw leaseLost();
  return job;
}

/** A worker that claims without capabilities is the built-in runner (or an older worker): built-in models only. */
export const BUILTIN_CAPABILITIES = { backends: ['builtin'] } as const;

/** The longest a claim may be held open (`wait_seconds`), below common proxy and load-balancer idle timeouts (30–60 s). */
export const MAX_CLAIM_WAIT_SECONDS = 25;
/** A parked claim records the worker again this often, well inside the registry's live window (60 s). */
const PARKED_TOUCH_MS = 15_000;

export interface ClaimWait {
  /** How long to hold the claim open while there is nothing to claim; capped at MAX_CLAIM_WAIT_SECONDS. 0: answer at once. */
  waitSeconds?: number;
  /** The request's signal: a client that went away ends the wait (and its listener) at once. */
  signal?: AbortSignal;
}

/**
 * The next job this worker can train. `modelIds` pins a worker to some models (a team's dedicated GPU box, or
 * a test); `capabilities` says which backends and base models it trains. Every claim also records the worker
 * in the registry (what it can train, what it runs), which is how a queued job knows whether anyone can take it.
 *
 * With `wait.waitSeconds` the claim is a long poll: when nothing is claimable it waits for a wake-up (a job queued, a
 * job ended: claim-wakeups.ts) and tries again, answering null only at the bound. A job therefore starts within
 * milliseconds of its creation instead of after the worker's next poll (1.7–4.7 s on average before). A worker that
 * also takes Tinker training clients is answered null early when a new training client waits, so that it polls for it.
 */
export async function claimJob(
  workerId: string,
  kinds: ('rl' | 'sft' | 'tinker')[] = ['rl', 'sft'],
  modelIds?: string[],
  capabilities: Pick<WorkerCapabilities, 'backends' | 'base_models'> = { backends: [...BUILTIN_CAPABILITIES.backends] },
  info?: Record<string, unknown>,
  wait: ClaimWait = {},
): Promise<WorkerJob | null> {
  const waitMs = Math.min(Math.max(0, wait.waitSeconds ?? 0), MAX_CLAIM_WAIT_SECONDS) * 1000;
  const attempt = (touch: boolean) => claimOnce(workerId, kinds, modelIds, capabilities, info, touch);
  if (waitMs === 0 || !claimsMayPark()) return attempt(true);
  const deadline = Date.now() + waitMs;
  let tinkerWoken = false;
  let touchedAt = 0;
  for (;;) {
    // Listening before the attempt: a job queued between the attempt and the wait still wakes this claim.
    const listener = listenForClaims(
      kinds.includes('tinker')
        ? (wake) =>
            onTinkerWake([NEW_CLIENT_KEY], () => {
              tinkerWoken = true;
              wake();
            })
        : undefined,
    );
    try {
      // Gone: a job claimed now would sit RUNNING, unseen, until its lease ran out.
      if (wait.signal?.aborted) return null;
      const touch = Date.now() - touchedAt >= PARKED_TOUCH_MS;
      if (touch) touchedAt = Date.now();
      const job = await attempt(touch);
      if (job || tinkerWoken || wait.signal?.aborted || !claimsMayPark() || Date.now() >= deadline) return job;
      await listener.wait(deadline - Date.now(), wait.signal);
    } finally {
      listener.close();
    }
  }
}

async function claimOnce(
  workerId: string,
  kinds: ('rl' | 'sft' | 'tinker')[],
  modelIds: string[] | undefined,
  capabilities: Pick<WorkerCapabilities, 'backends' | 'base_models'>,
  info: Record<string, unknown> | undefined,
  touch: boolean,
): Promise<WorkerJob | null> {
  const db = await getDb();
  const baseModels = trainableBaseModelIds(capabilities);
  // `tinker` is recorded with the worker (it takes training clients through /v1/workers/tinker/poll), never claimed.
  const jobKinds = kinds.filter((k): k is 'rl' | 'sft' => k !== 'tinker');
  const job =
    jobKinds.length === 0
      ? undefined
      : await db.transaction((tx) =>
          queueRepo.claimNextJob(tx, { workerId, kinds: jobKinds, modelIds, baseModels, now: new Date() }),
        );
  const registered: WorkerCapabilities = {
    ...capabilities,
    kinds,
    ...(modelIds?.length ? { model_ids: modelIds } : {}),
  };
  // A parked claim's re-checks record the worker only now and then (PARKED_TOUCH_MS): a claim that found a job always.
  if (touch || job) {
    await workersRepo.touchWorker(db, {
      id: workerId,
      now: new Date(),
      currentJobId: job?.id ?? null,
      capabilities: registered as unknown as Record<string, unknown>,
      ...(info ? { info } : {}),
    });
  }
  if (!job) return null;
  const [start, model] = await Promise.all([
    modelsRepo.startingCheckpoint(db, job.modelId, job.config.start_from),
    modelsRepo.findModelById(db, job.modelId),
  ]);
  if (!model) {
    // Deleted between claim and now: deletion already failed the job, nothing to run.
    return null;
  }
  if (start === 'missing') {
    const message = `Checkpoint step ${String(job.config.start_from)} was deleted before the job started; nothing to train from`;
    await db.transaction(async (tx) => failInTx(tx, (await queueRepo.lockJob(tx, job.id))!, message));
    await workersRepo.clearWorkerJob(db, workerId, job.id);
    await wakeClaims();
    return null;
  }
  // A job that cannot save its checkpoint must not train first and fail at the end with a vague error.
  try {
    await probeArtifactStore();
  } catch (err) {
    const fault = storageFaultMessage(err) ?? 'The artifact store cannot be written';
    log.error({ err: (err as Error).message, jobId: job.id }, `${fault}; failing the job before training`);
    await db.transaction(async (tx) =>
      failInTx(tx, (await queueRepo.lockJob(tx, job.id))!, `${fault}: the checkpoint could not be saved`),
    );
    await wakeClaims();
    return null;
  }
  const entry = allBaseModels().find((m) => m.id === model.baseModel);
  return {
    id: job.id,
    kind: job.kind,
    model_id: job.modelId,
    base_model: model.baseModel,
    backend: entry?.backend === 'hf' ? 'hf' : 'builtin',
    base_model_path: entry?.backend === 'hf' ? (entry.path ?? null) : null,
    config: job.config,
    base_checkpoint: start ? { step: start.step, artifact_key: start.artifactKey } : null,
    attempts: job.attempts,
    lease_seconds: LEASE_SECONDS(),
  };
}

/** Extends the lease; tells the worker to stop when the job was cancelled or taken away. */
export async function heartbeat(
  jobId: string,
  workerId: string,
  info?: Record<string, unknown>,
): Promise<{ cancelled: boolean }> {
  const db = await getDb();
  const outcome = await db.transaction(async (tx) => {
    const job = await queueRepo.lockJob(tx, jobId);
    if (!job || job.workerId !== workerId || job.status !== 'RUNNING') return { cancelled: true };
    await trainingRepo.updateJob(tx, jobId, { heartbeatAt: new Date() });
    return { cancelled: false };
  });
  await workersRepo.touchWorker(db, {
    id: workerId,
    now: new Date(),
    currentJobId: outcome.cancelled ? null : jobId,
    ...(info ? { info } : {}),
  });
  return outcome;
}

function isFlatNumeric(data: Record<string, unknown>): boolean {
  return Object.values(data).every((v) => typeof v === 'number' && Number.isFinite(v));
}

/**
 * Appends progress events, enforcing the order clients rely on (docs/contract.md §3.5–3.6): training_started once and
 * first, with an integer num_sequences; then at most num_sequences all-numeric gradient_step events.
 */
export async function appendEvents(
  jobId: string,
  workerId: string,
  events: WorkerEvent[],
  seq?: number,
): Promise<{ appended: number }> {
  const db = await getDb();
  return db.transaction(async (tx) => {
    const job = await requireLease(tx, jobId, workerId);
    let started = await queueRepo.hasStarted(tx, jobId);
    let numSequences = job.numSequences;
    let completed = job.completedSteps;
    // With a sequence number a resent batch (its answer was lost) is safe: the events it shares with what is
    // stored are skipped, so retries neither duplicate nor get rejected. A gap means events were lost.
    const stored = (started ? 1 : 0) + completed;
    let skip = 0;
    if (seq !== undefined) {
      if (seq > stored) {
        throw new ApiError(
          'conflict',
          `events ${stored} to ${seq - 1} of this job were never received; resend from ${stored}`,
        );
      }
      skip = Math.min(events.length, stored - seq);
    }
    const completedBefore = completed;
    const curve: Record<string, number>[] = [];
    for (const event of events.slice(skip)) {
      if (event.type === 'training_started') {
        const n = event.data.num_sequences;
        // A job requeued before its first step (recoverStaleJobs) keeps the training_started its lost worker sent:
        // the next worker's, for the same data, is skipped even without a sequence number, so clients see one.
        if (started && completed === 0 && job.attempts > 1 && n === numSequences) continue;
        if (started) throw ApiError.valueError(['body', 'events'], 'training_started was already sent');
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || !isFlatNumeric(event.data)) {
          throw ApiError.valueError(
            ['body', 'events'],
            'training_started needs an integer num_sequences ≥ 0 and numeric data',
          );
        }
        started = true;
        numSequences = n;
      } else {
        if (!started) throw ApiError.valueError(['body', 'events'], 'gradient_step before training_started');
        if (!isFlatNumeric(event.data))
          throw ApiError.valueError(['body', 'events'], 'gradient_step data must be finite numbers');
        if (completed >= (numSequences ?? 0)) {
          throw ApiError.valueError(
            ['body', 'events'],
            `more gradient_step events than num_sequences (${numSequences})`,
          );
        }
        completed++;
        curve.push(event.data as Record<string, number>);
      }
      await trainingRepo.insertEvent(tx, jobId, event.type, event.data);
    }
    // The model's training curve: every job's gradient steps on one axis, x continuing from the previous job's.
    const before = curve.length > 0 ? await modelsRepo.advanceGradientSteps(tx, job.modelId, curve.length) : undefined;
    if (before !== undefined) {
      await appendRunPoints(
        tx,
        modelsRepo.gradientRunId(job.modelId),
        curve.map((metrics, i) => ({ step: before + i + 1, metrics })),
      );
      await appendGradientMarks(tx, job.modelId, before, curve);
    }
    const now = new Date();
    await trainingRepo.updateJob(tx, jobId, {
      numSequences,
      completedSteps: completed,
      heartbeatAt: now,
      progressAt: now,
      ...(before !== undefined && completedBefore === 0 ? { firstGradientX: before } : {}),
    });
    return { appended: events.length - skip };
  });
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Commits the new checkpoint and then training_ended, in one transaction, so a client that sees the event
 * immediately finds the checkpoint listed (docs/contract.md §3.6.4). The step is highest-ever + 1 (docs/contract.md §2.7).
 */
export async function completeJob(
  jobId: string,
  workerId: string,
  input: { artifactKey: string | null; metrics?: Record<string, number> },
): Promise<{ step: number }> {
  const db = await getDb();
  const result = await db.transaction(async (tx) => {
    const current = await queueRepo.lockJob(tx, jobId);
    // A resent complete whose first answer was lost: the same worker, the same key, already committed.
    if (
      current?.status === 'COMPLETED' &&
      current.workerId === workerId &&
      current.resultStep !== null &&
      (await completedWithKey(tx, current, input.artifactKey))
    ) {
      return { step: current.resultStep };
    }
    const job = await requireLease(tx, jobId, workerId);
    if (input.artifactKey !== null) await requireAssignedArtifact(job, input.artifactKey);
    if (!(await queueRepo.hasStarted(tx, jobId)))
      throw ApiError.valueError(['body'], 'training_started was never sent');
    if (job.completedSteps !== job.numSequences) {
      throw ApiError.valueError(['body'], `${job.completedSteps} of ${job.numSequences} gradient steps were reported`);
    }
    const model = await modelsRepo.lockModel(tx, job.modelId);
    if (!model) throw leaseLost();
    const step = model.lastStep + 1;

    // train/<k> = the mean of each gradient_step key over the job; val/<k> (an SFT job's held-out examples,
    // scored after each epoch) = the last value, which describes the weights this checkpoint holds
    // (docs/contract.md §2.6).
    const steps = await trainingRepo.listEvents(tx, jobId, { limit: 1_000_000 });
    const byKey = new Map<string, number[]>();
    for (const e of steps) {
      if (e.type !== 'gradient_step') continue;
      for (const [k, v] of Object.entries(e.data))
        if (typeof v === 'number') {
          const values = byKey.get(k);
          if (values) values.push(v);
          else byKey.set(k, [v]);
        }
    }
    const metrics: Record<string, number> = {};
    for (const [k, values] of byKey) {
      if (k.startsWith('val/')) metrics[k] = values.at(-1)!;
      else metrics[`train/${k}`] = mean(values);
    }
    for (const [k, v] of Object.entries(input.metrics ?? {})) if (Number.isFinite(v)) metrics[`train/${k}`] = v;
    metrics['train/num_gradient_steps'] = job.completedSteps;

    const [checkpoint] = await modelsRepo.insertCheckpoint(tx, {
      modelId: model.id,
      step,
      metrics,
      artifactKey: input.artifactKey,
    });
    await upsertRunMetrics(tx, model.runId, step, metrics);
    // The model's auto-eval (docs/evals.md) queues its run on this checkpoint in the same transaction, so no
    // checkpoint of an auto-evaluated model goes without one. lib/jobs/server may not call services: the row is
    // written here and the runner (lib/services/eval-runner.ts) is woken through the notification channel.
    const evalRunId = await queueAutoEvalRun(tx, model.id, step);
    await trainingRepo.insertEvent(tx, jobId, 'training_ended', {});
    const now = new Date();
    await trainingRepo.updateJob(tx, jobId, {
      status: 'COMPLETED',
      resultStep: checkpoint.step,
      finishedAt: now,
      progressAt: now,
    });
    return { step, modelId: model.id, evalRunId };
  });
  // The model's latest checkpoint moved: chat requests for it must see the new one.
  if (result.modelId) await modelsChanged([result.modelId]);
  if (result.evalRunId) await publish(EVAL_RUNS_CHANNEL, result.evalRunId);
  await workersRepo.clearWorkerJob(db, workerId, jobId);
  // The model's next job (they run one at a time) may be claimed now: parked claims look again.
  await wakeClaims();
  return { step: result.step };
}

async function completedWithKey(tx: DbOrTx, job: TrainingJobRow, artifactKey: string | null): Promise<boolean> {
  const checkpoint = await modelsRepo.findCheckpointByStep(tx, job.modelId, job.resultStep!);
  return checkpoint !== undefined && checkpoint.artifactKey === artifactKey;
}

/**
 * A worker completes with the key the server gave its upload, nothing else (another job's or model's key would
 * make this checkpoint point at files it does not own). A LoRA checkpoint needs both of its files in the store.
 */
async function requireAssignedArtifact(job: TrainingJobRow, key: string): Promise<void> {
  const adapter = adapterKeys(job.modelId, job.id);
  if (key !== checkpointKey(job.modelId, job.id) && key !== adapter.weights) {
    throw ApiError.valueError(
      ['body', 'artifact_key'],
      'artifact_key must be the key the checkpoint upload returned for this job',
      key,
    );
  }
  if (!(await artifactExists(key))) {
    throw ApiError.valueError(['body', 'artifact_key'], 'Nothing was uploaded at this key', key);
  }
  if (key === adapter.weights && !(await artifactExists(adapter.config))) {
    throw ApiError.valueError(
      ['body', 'artifact_key'],
      'The adapter_config.json of this LoRA checkpoint was not uploaded',
      key,
    );
  }
}

async function failInTx(tx: DbOrTx, job: TrainingJobRow, message: string, extra: { cancelled?: true } = {}) {
  await trainingRepo.insertEvent(tx, job.id, 'training_failed', { error_message: message, ...extra });
  const now = new Date();
  await trainingRepo.updateJob(tx, job.id, {
    status: 'FAILED',
    errorMessage: message,
    finishedAt: now,
    progressAt: now,
  });
}

export async function failJob(jobId: string, workerId: string, message: string): Promise<void> {
  const db = await getDb();
  await db.transaction(async (tx) => {
    const current = await queueRepo.lockJob(tx, jobId);
    // A resent fail whose first answer was lost changes nothing and is not an error.
    if (current?.status === 'FAILED' && current.workerId === workerId && current.errorMessage === message) return;
    await failInTx(tx, await requireLease(tx, jobId, workerId), message);
  });
  await workersRepo.clearWorkerJob(db, workerId, jobId);
  await wakeClaims();
}

/** Ends a queued or running job; its worker learns it at the next heartbeat. Terminal jobs are left as they are. */
export async function cancelJob(jobId: string): Promise<TrainingJobRow> {
  const db = await getDb();
  const row = await db.transaction(async (tx) => {
    const job = await queueRepo.lockJob(tx, jobId);
    if (!job) throw ApiError.notFound('Training job not found');
    if (job.status === 'QUEUED' || job.status === 'RUNNING') {
      // Still training_failed on the wire: it is the terminal event every client knows (ART's client validates the
      // type against its four and ends its polling only on training_ended/training_failed). `cancelled: true` marks
      // it neutral for readers that know it (the dashboard shows training_cancelled); docs/contract.md §3.6.
      await failInTx(tx, job, 'cancelled', { cancelled: true });
      await trainingRepo.updateJob(tx, jobId, { cancelRequestedAt: new Date() });
    }
    return (await queueRepo.lockJob(tx, jobId))!;
  });
  await wakeClaims();
  return row;
}

/**
 * How many times a job is handed to a worker before a lost worker fails it instead of requeueing it: a job that
 * kills its worker (out of memory, a crash in a kernel) must not loop forever.
 */
export const MAX_JOB_ATTEMPTS = 3;

/**
 * Recovers jobs whose worker went away. A job that had taken no gradient step goes back to the queue (issue 43:
 * before, one that had sent training_started failed with no way back): nothing was learned, so the next worker
 * starts it from scratch. Its training_started stays (events are append-only); the next worker's is skipped by
 * the events' sequence number, so clients see it once. After MAX_JOB_ATTEMPTS claims, or once a step was taken
 * (its steps are in the model's curve and cannot be replayed), the job ends with training_failed, so pollers
 * stop (docs/contract.md §3.6.5). Never leaves a job RUNNING forever.
 */
export async function recoverStaleJobs(opts: { deadWorkerPrefix?: { prefix: string; except: string } } = {}) {
  const db = await getDb();
  const now = Date.now();
  const stale = await queueRepo.findStaleJobs(db, {
    heartbeatBefore: new Date(now - LEASE_SECONDS() * 1000),
    progressBefore: new Date(now - IDLE_LIMIT_MS()),
    deadWorkerPrefix: opts.deadWorkerPrefix,
  });
  const outcome = { requeued: 0, failed: 0 };
  for (const candidate of stale) {
    await db.transaction(async (tx) => {
      const job = await queueRepo.lockJob(tx, candidate.id);
      if (!job || job.status !== 'RUNNING' || job.workerId !== candidate.workerId) return;
      const idle = job.progressAt && now - job.progressAt.getTime() > IDLE_LIMIT_MS();
      if (!idle && job.completedSteps === 0 && job.attempts < MAX_JOB_ATTEMPTS) {
        await trainingRepo.updateJob(tx, job.id, { status: 'QUEUED', workerId: null, heartbeatAt: null });
        log.warn(
          { jobId: job.id, workerId: job.workerId, attempt: job.attempts },
          'training worker lost before the first step: job requeued',
        );
        outcome.requeued++;
      } else {
        await failInTx(
          tx,
          job,
          idle
            ? `Training made no progress for ${Math.round(IDLE_LIMIT_MS() / 60_000)} minutes and was stopped`
            : job.completedSteps === 0
              ? `The training worker stopped responding ${job.attempts} times before the first step (its process ended or lost contact); the job was stopped`
              : 'The training worker stopped responding (its process ended or lost contact); the job was stopped',
        );
        outcome.failed++;
      }
    });
  }
  // A job back in the queue, or a model whose running job ended, has something to claim.
  if (outcome.requeued + outcome.failed > 0) await wakeClaims();
  return outcome;
}

/** Queue depth, for /v1/system-check and the dashboard. */
export async function queueStats() {
  return queueRepo.countByStatus(await getDb());
}

/** Reads and parses a stored SFT dataset; lib/services/datasets owns the format, so the caller passes it in. */
export type TrainingExamplesLoader = (key: string, file: string) => Promise<SftExample[]>;

/** What the job trains on: its stored trajectory groups (RL) or its dataset's examples (SFT). */
export async function jobInput(
  jobId: string,
  workerId: string,
  loadExamples: TrainingExamplesLoader,
): Promise<JobInput> {
  const db = await getDb();
  const job = await db.transaction((tx) => requireLease(tx, jobId, workerId));
  if (job.kind === 'rl') {
    // A resubmitted RL job trains on the groups stored with the job it repeats (lib/services/training-jobs.ts).
    const source = typeof job.config.input_job_id === 'string' ? job.config.input_job_id : jobId;
    const rows = await trainingRepo.listGroupsOfJob(db, source);
    return { kind: 'rl', trajectory_groups: rows.map((r) => r.data) };
  }
  const key = String(job.config.dataset_key);
  const file = String(job.config.dataset_file ?? key.split('/').at(-1));
  try {
    const all = await loadExamples(key, file);
    const { train, validation } = holdOutValidation(all, Number(job.config.validation_split ?? 0));
    return { kind: 'sft', file, examples: train, validation };
  } catch (err) {
    if (!(err instanceof SftDataError)) throw err;
    // The dataset changed or vanished since the job was accepted: end the job with the precise reason
    // (docs/contract.md §3.2) instead of letting the worker report an internal error.
    await failJob(jobId, workerId, err.message);
    throw leaseLost();
  }
}

/**
 * The artifact key of the checkpoint the job trains from; null when it starts from the base model. `file`
 * asks for the adapter_config.json beside a LoRA checkpoint's weights (readers find it by file name).
 */
export async function baseWeightsKey(
  jobId: string,
  workerId: string,
  file?: 'adapter_config.json',
): Promise<string | null> {
  const db = await getDb();
  const job = await db.transaction((tx) => requireLease(tx, jobId, workerId));
  const start = await modelsRepo.startingCheckpoint(db, job.modelId, job.config.start_from);
  // Deleted after the claim: the worker's own claim answer named it, so it asks for what is gone.
  if (start === 'missing') throw ApiError.notFound(`Checkpoint step ${String(job.config.start_from)} was deleted`);
  const key = start?.artifactKey ?? null;
  if (!file || !key) return key;
  return key.endsWith('/adapter_model.safetensors') ? key.replace(/adapter_model\.safetensors$/, file) : null;
}

/**
 * Streams an uploaded checkpoint file into the store at the job's own key (written whole, then renamed into
 * place, so a half-sent file is never visible). Built-in models upload `model.safetensors`; Hugging Face models
 * a PEFT adapter as two files, `adapter_config.json` and `adapter_model.safetensors`, in one folder. Uploading
 * the same file again overwrites it, so a retried upload is safe. Nothing is listed until complete().
 */
export async function storeCheckpointUpload(
  jobId: string,
  workerId: string,
  body: NodeJS.ReadableStream,
  file: 'model.safetensors' | 'adapter_model.safetensors' | 'adapter_config.json' = 'model.safetensors',
): Promise<string> {
  const db = await getDb();
  const job = await db.transaction((tx) => requireLease(tx, jobId, workerId));
  const model = await modelsRepo.findModelById(db, job.modelId);
  const isHf = allBaseModels().find((m) => m.id === model?.baseModel)?.backend === 'hf';
  if (isHf !== (file !== 'model.safetensors')) {
    throw ApiError.valueError(
      ['query', 'file'],
      isHf
        ? "A Hugging Face model's checkpoint is a LoRA adapter: upload adapter_config.json and adapter_model.safetensors"
        : "A built-in model's checkpoint is one model.safetensors file",
      file,
    );
  }
  const adapter = adapterKeys(job.modelId, job.id);
  const key =
    file === 'model.safetensors'
      ? checkpointKey(job.modelId, job.id)
      : file === 'adapter_config.json'
        ? adapter.config
        : adapter.weights;
  if (file === 'adapter_config.json') {
    // Small: checked before it is stored, so a bad config never sits where readers look for it.
    const text = await readSmallBody(body, 1024 * 1024);
    requireAdapterConfig(text);
    await putArtifact(key, text);
    return key;
  }
  await putArtifactStream(key, body, {
    limit: config.maxCheckpointBytes,
    onLimit: () =>
      new ApiError('payload_too_large', `Checkpoint file ${file} is larger than TUNEBOARD_MAX_CHECKPOINT_MB`),
  });
  return key;
}

async function readSmallBody(body: NodeJS.ReadableStream, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    size += buf.length;
    if (size > limit) throw new ApiError('payload_too_large', 'adapter_config.json too large');
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The adapter config must be what PEFT wrote: a JSON object with a LoRA rank, or readers fail much later. */
function requireAdapterConfig(text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const r = (parsed as { r?: unknown } | undefined)?.r;
  if (typeof parsed !== 'object' || parsed === null || typeof r !== 'number' || !Number.isInteger(r) || r < 1) {
    throw ApiError.valueError(
      ['body'],
      'adapter_config.json must be a PEFT LoRA config (a JSON object with an integer r ≥ 1)',
    );
  }
}

/**
 * A worker that stops cleanly (after its job) signs off: it leaves the registry at once, so a queued job only it
 * could train says "none is connected" now, not once the live window (60 s) has passed. A worker that still holds
 * a job or Tinker training clients stays registered: the job's lease and the Tinker sweeper decide what becomes of
 * them, as for a worker that died.
 */
export async function signOffWorker(workerId: string): Promise<{ signed_off: boolean }> {
  const db = await getDb();
  if ((await tinkerRepo.liveClientsByWorker(db, [workerId])).length > 0) return { signed_off: false };
  const removed = await workersRepo.deleteIdleWorker(db, workerId);
  if (removed) log.info({ worker: workerId }, 'worker signed off');
  return { signed_off: removed };
}

/** Drops registry rows of workers not seen for a day, so the table stays as small as the fleet. */
export async function pruneWorkerRegistry(): Promise<void> {
  await workersRepo.deleteWorkersSeenBefore(await getDb(), new Date(Date.now() - 24 * 3600_000));
}
