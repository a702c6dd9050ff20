import 'server-only';
import type { z } from 'zod';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as trainingRepo from '@/lib/db/repositories/training';
import { JsonText, listText, toList, type ListEnvelope } from '@/lib/schemas/common';
import {
  extraSettings,
  resolveLora,
  ignoredRlSettings,
  resolveRlConfig,
  resolveSftConfig,
  RL_KNOWN_KEYS,
  sftWorkerSettings,
  type EntityJobDto,
  type JobEventDto,
  type TrainingJobDto,
} from '@/lib/schemas/training-jobs';
import type { createSftJobWithEvalBodySchema } from '@/lib/schemas/evals';
import type { JobStatus } from '@/lib/db/schema';
import { accessibleEntityIds, listScope, type Principal } from './accounts';
import { resolveTrainingData, validateTrainingData } from './datasets';
import { pageEvents, pageEventsInScope } from '@/lib/db/repositories/job-event-pages';
import { requireModel } from './models';
import { prepareAutoEval } from './evals';
import { setAutoEval } from '@/lib/db/repositories/evals';
import { requirePermission } from './permissions';
import { recordTrajectories } from './trajectories';
import type { PreparedRlJobBody } from '@/lib/body/prepared';
import { waitingReason, waitingReasons } from './training-workers';
import { cancelJob, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { wakeClaims } from '@/lib/jobs/server/claim-wakeups';

export { JOB_NOT_FOUND };

export function toJobDto(row: trainingRepo.TrainingJobRow, waitingReason: string | null = null): TrainingJobDto {
  return {
    id: row.id,
    model_id: row.modelId,
    type: row.kind,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
    error_message: row.errorMessage,
    step: row.resultStep,
    base_step: row.baseStep,
    num_sequences: row.numSequences,
    completed_steps: row.completedSteps,
    config: row.config,
    waiting_reason: waitingReason,
    cancelled: row.status === 'FAILED' && row.cancelRequestedAt !== null,
  };
}

export function toEventDto(row: trainingRepo.JobEventRow): JobEventDto {
  return { id: row.id, type: row.type, data: row.data, created_at: row.createdAt.toISOString() };
}

/** An RL job body, parsed and split for storage by lib/body (off the request thread when it is large). */
export async function createRlJob(principal: Principal, body: PreparedRlJobBody) {
  const db = await getDb();
  const model = await requireModel(principal, body.model_id);
  const config = resolveRlConfig(body.experimental_config);
  // Checked before the job exists (a bad scorer is a 422 and no job), stored before it can finish.
  const autoEval = body.eval ? await prepareAutoEval(principal, body.eval, ['body', 'eval']) : undefined;
  const job = await db.transaction(async (tx) => {
    if (autoEval) await setAutoEval(tx, model.id, autoEval);
    const latest = await modelsRepo.latestCheckpoint(tx, model.id);
    const row = await trainingRepo.insertJob(tx, {
      entityId: model.entityId,
      modelId: model.id,
      createdBy: principal.userId,
      kind: 'rl',
      config: {
        ...config,
        // For Hugging Face workers: the adapter's shape, and settings nobody acts on (reported, not dropped).
        lora: resolveLora(body.experimental_config),
        extra_settings: extraSettings(body.experimental_config, RL_KNOWN_KEYS),
        num_groups: body.groups.length,
        ignored_settings: ignoredRlSettings(body.experimental_config),
      },
      baseStep: latest?.step ?? null,
    });
    // The rollouts describe the policy that produced them: their train/* metrics go on the
    // checkpoint that was latest when the job was accepted (docs/contract.md §2.6).
    await recordTrajectories(tx, model, {
      split: 'train',
      groups: body.groups,
      source: 'train',
      jobId: row.id,
    });
    return row;
  });
  // A worker's parked claim takes it now rather than at its next poll (lib/jobs/server/claim-wakeups.ts).
  await wakeClaims();
  return { id: job.id };
}

export async function createSftJob(principal: Principal, body: z.infer<typeof createSftJobWithEvalBodySchema>) {
  const db = await getDb();
  const model = await requireModel(principal, body.model_id);
  const ref = await resolveTrainingData(principal, body.training_data_url);
  const numExamples = await validateTrainingData(ref, body.training_data_url);
  const config = resolveSftConfig(body);
  if (config.validation_split > 0 && numExamples < 2) {
    throw ApiError.valueError(
      ['body', 'config', 'validation_split'],
      `A validation split needs at least 2 examples (the dataset has ${numExamples}): one to train on, one to hold out`,
      config.validation_split,
    );
  }
  const start = await modelsRepo.startingCheckpoint(db, model.id, config.start_from);
  if (start === 'missing') {
    throw ApiError.valueError(
      ['body', 'config', 'start_from'],
      `The model has no checkpoint at step ${String(config.start_from)}`,
      config.start_from,
    );
  }
  // Checked before the job exists (a bad scorer is a 422 and no job), stored before a worker can claim it.
  const autoEval = body.eval ? await prepareAutoEval(principal, body.eval, ['body', 'eval']) : undefined;
  if (autoEval) await setAutoEval(db, model.id, autoEval);
  const job = await trainingRepo.insertJob(db, {
    entityId: model.entityId,
    modelId: model.id,
    createdBy: principal.userId,
    kind: 'sft',
    config: {
      ...config,
      ...sftWorkerSettings(body),
      training_data_url: body.training_data_url,
      dataset_key: ref.key,
      dataset_file: ref.file,
      num_examples: numExamples,
    },
    baseStep: start?.step ?? null,
  });
  await wakeClaims();
  return { id: job.id };
}

async function requireJob(principal: Principal, jobId: string) {
  const job = await trainingRepo.findJobInScope(await getDb(), jobId, accessibleEntityIds(principal));
  if (!job) throw ApiError.notFound(JOB_NOT_FOUND);
  return job;
}

export async function getJob(principal: Principal, jobId: string): Promise<TrainingJobDto> {
  const job = await requireJob(principal, jobId);
  return toJobDto(job, await waitingReason(job));
}

/**
 * Extension: the jobs of the caller's entities (or of one), newest first, or with `active` only the running and
 * queued ones, running first. Each names its model.
 */
export async function listEntityJobs(
  principal: Principal,
  q: {
    entity?: string;
    status?: JobStatus;
    active?: boolean;
    after?: string;
    limit: number;
    model_id?: string;
    project?: string;
    kind?: 'rl' | 'sft';
    q?: string;
  },
): Promise<ListEnvelope<EntityJobDto>> {
  const db = await getDb();
  const entityIds = listScope(principal, q.entity);
  let after: { createdAt: Date; id: string } | undefined;
  if (q.after !== undefined) {
    if (q.active) throw ApiError.valueError(['query', 'after'], 'active lists are not paged');
    const cursor = /^[0-9a-f-]{36}$/i.test(q.after)
      ? await trainingRepo.findJobInScope(db, q.after, entityIds)
      : undefined;
    if (!cursor) throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
    after = { createdAt: cursor.createdAt, id: cursor.id };
  }
  // Active jobs are few (a queue, not a history): one page holds them all.
  const limit = q.active ? 200 : q.limit;
  const search = q.q?.trim();
  const rows = await trainingRepo.listJobsOfEntities(db, entityIds, {
    status: q.status,
    modelId: q.model_id,
    project: q.project,
    kind: q.kind,
    search: search ? search : undefined,
    active: q.active,
    after,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const [reasons, lastSteps] = await Promise.all([
    waitingReasons(page.map((r) => r.job)),
    // Only jobs that took a step have a speed: queued jobs and jobs still loading cost no lookup.
    trainingRepo.lastStepOfJobs(
      db,
      page.filter((r) => r.job.completedSteps > 0).map((r) => r.job.id),
    ),
  ]);
  return toList(
    // The model added to the job's object, not both spread into a new one: measured in a loop, V8's spread copy took
    // 1.1–1.2 KiB a job against 0.36–0.40 KiB (see toSummaryDto in models.ts).
    page.map((r, i) =>
      Object.assign(toJobDto(r.job, reasons[i]), { model: r.model, speed: speedOf(lastSteps.get(r.job.id)) }),
    ),
    rows.length > limit,
  );
}

/** A gradient step's speed fields (lib/jobs/worker/runner.ts speedOf; the Python worker's step_speed), when it has them. */
function speedOf(step: Record<string, unknown> | undefined): EntityJobDto['speed'] {
  const seconds = step?.step_seconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return null;
  const tokens = step?.tokens_per_second;
  return {
    step_seconds: seconds,
    tokens_per_second: typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : null,
  };
}

export async function listJobsOfModel(
  principal: Principal,
  modelId: string,
  q: { after?: string; limit: number; status?: JobStatus },
): Promise<ListEnvelope<TrainingJobDto>> {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  let after: { createdAt: Date; id: string } | undefined;
  if (q.after !== undefined) {
    const cursor = /^[0-9a-f-]{36}$/i.test(q.after)
      ? await trainingRepo.findJobInScope(db, q.after, [model.entityId])
      : undefined;
    if (!cursor || cursor.modelId !== model.id)
      throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
    after = { createdAt: cursor.createdAt, id: cursor.id };
  }
  const rows = await trainingRepo.listJobsOfModel(db, model.id, { status: q.status, after, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  const reasons = await waitingReasons(page);
  return toList(
    page.map((row, i) => toJobDto(row, reasons[i])),
    rows.length > q.limit,
  );
}

type EventListQuery = {
  after?: string;
  before?: string;
  newest_first?: boolean;
  event_type?: JobEventDto['type'];
  limit: number;
};

/**
 * Events strictly after the cursor, chronologically; replays are never deduplicated (docs/contract.md §3.7).
 * Extensions for the dashboard: `newest_first` reverses the list, and `before` pages back towards its start.
 */
export async function listEvents(
  principal: Principal,
  jobId: string,
  q: EventListQuery,
): Promise<ListEnvelope<JobEventDto>> {
  const db = await getDb();
  const job = await requireJob(principal, jobId);
  if (q.after !== undefined && q.before !== undefined) {
    throw ApiError.valueError(['query', 'before'], 'Use after or before, not both', q.before);
  }
  const seqOf = async (param: 'after' | 'before', id: string) => {
    const cursor = /^[0-9a-f-]{36}$/i.test(id) ? await trainingRepo.findEvent(db, job.id, id) : undefined;
    if (!cursor) throw ApiError.valueError(['query', param], 'Unknown cursor', id);
    return cursor.seq;
  };
  const afterSeq = q.after === undefined ? undefined : await seqOf('after', q.after);
  const order = q.newest_first ? 'desc' : 'asc';
  const beforeSeq = q.before === undefined ? undefined : await seqOf('before', q.before);
  const { rows, backwards } = await pageEvents(db, job.id, {
    order,
    afterSeq,
    beforeSeq,
    type: q.event_type,
    limit: q.limit + 1,
  });
  const page = rows.slice(0, q.limit);
  if (backwards) page.reverse();
  return toList(page.map(toEventDto), rows.length > q.limit);
}

/**
 * listEvents as the events route answers it. The common case, a client following a job (oldest first, after a
 * cursor), is one query whose page the database writes out as JSON; the dashboard's orders and filters take
 * listEvents.
 */
export async function listEventsJson(principal: Principal, jobId: string, q: EventListQuery): Promise<JsonText> {
  if (q.newest_first || q.before !== undefined || q.event_type !== undefined) {
    return new JsonText(JSON.stringify(await listEvents(principal, jobId, q)));
  }
  const page = await pageEventsInScope(await getDb(), {
    jobId,
    entityIds: accessibleEntityIds(principal),
    afterId: q.after,
    limit: q.limit,
  });
  if (page.kind === 'no_job') throw ApiError.notFound(JOB_NOT_FOUND);
  if (page.kind === 'unknown_cursor') throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
  return listText(page.items, page.hasMore, page.firstId, page.lastId);
}

/**
 * Runs a failed job again as a new job with the same data and settings (issue 43: a job whose worker died had no
 * way back). The new job is queued behind the model's others; the failed one stays as it was, with its events. An
 * SFT job's dataset is validated again (it may have changed or gone); an RL job trains on the trajectory groups
 * stored with the job it repeats, which are not recorded a second time (their metrics are already on the model).
 */
export async function resubmitTrainingJob(principal: Principal, jobId: string): Promise<TrainingJobDto> {
  const failed = await requireJob(principal, jobId);
  if (failed.status !== 'FAILED') {
    throw new ApiError(
      'conflict',
      `Only a failed or cancelled job can be resubmitted; this one is ${failed.status.toLowerCase()}`,
    );
  }
  // The same rights as submitting it: access to the model.
  const model = await requireModel(principal, failed.modelId);
  const db = await getDb();
  const config = { ...failed.config };
  if (failed.kind === 'sft') {
    const url = String(config.training_data_url);
    let ref: Awaited<ReturnType<typeof resolveTrainingData>>;
    try {
      ref = await resolveTrainingData(principal, url);
      config.num_examples = await validateTrainingData(ref, url);
    } catch (err) {
      // The request has no body: the dataset's problem is the job's, so it is reported at the job's id.
      if (!(err instanceof ApiError) || !err.issues?.length) throw err;
      const reason = err.issues[0].msg.replace(/^Value error, /, '');
      throw ApiError.valueError(['path', 'training_job_id'], `The job's training data cannot be used: ${reason}`, url);
    }
    config.dataset_key = ref.key;
    config.dataset_file = ref.file;
    const start = await modelsRepo.startingCheckpoint(db, model.id, config.start_from);
    if (start === 'missing') {
      throw ApiError.valueError(
        ['path', 'training_job_id'],
        `The job started from checkpoint step ${String(config.start_from)}, which was deleted`,
      );
    }
    const row = await trainingRepo.insertJob(db, {
      entityId: model.entityId,
      modelId: model.id,
      createdBy: principal.userId,
      kind: 'sft',
      config: { ...config, resubmitted_from: failed.id },
      baseStep: start?.step ?? null,
    });
    return toJobDto(row, await waitingReason(row));
  }
  const row = await db.transaction(async (tx) => {
    const latest = await modelsRepo.latestCheckpoint(tx, model.id);
    const inputJob = typeof config.input_job_id === 'string' ? config.input_job_id : failed.id;
    return trainingRepo.insertJob(tx, {
      entityId: model.entityId,
      modelId: model.id,
      createdBy: principal.userId,
      kind: 'rl',
      config: { ...config, input_job_id: inputJob, resubmitted_from: failed.id },
      baseStep: latest?.step ?? null,
    });
  });
  return toJobDto(row, await waitingReason(row));
}

export async function cancelTrainingJob(principal: Principal, jobId: string): Promise<TrainingJobDto> {
  const job = await requireJob(principal, jobId);
  if (job.createdBy !== principal.userId) requirePermission(principal, job.entityId, 'cancel_any_job');
  return toJobDto(await cancelJob(job.id), null);
}
