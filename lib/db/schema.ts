import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  date,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
// Relative: drizzle-kit loads this file outside the app's path aliases.
import { TINKER_REQUEST_KINDS, type TinkerRequestKind } from '../schemas/workers';

/**
 * A model's auto-eval setting as stored: the scorers already checked and named (lib/services/evals.ts), and the user
 * whose scope the runs resolve their targets and judges in.
 */
export interface AutoEvalSetting {
  eval_set_id: string;
  scorers: Record<string, unknown>[];
  sampling: Record<string, unknown>;
  n: number;
  created_by: string;
}

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    passwordHash: text('password_hash').notNull(),
    personalEntityId: uuid('personal_entity_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_email_key').on(t.email)],
);

export const sessions = pgTable(
  'sessions',
  {
    // sha256 of the cookie value: a database leak yields no usable session.
    tokenHash: text('token_hash').primaryKey(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** A namespace that owns projects and models: a user's personal entity or a team. */
export const entities = pgTable(
  'entities',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['user', 'team'] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('entities_name_key').on(t.name)],
);

export const entityMembers = pgTable(
  'entity_members',
  {
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.entityId, t.userId] }), index('entity_members_user_idx').on(t.userId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The first characters of the key, shown in listings so people can tell keys apart. */
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash_key').on(t.keyHash), index('api_keys_user_idx').on(t.userId)],
);

export const projects = pgTable(
  'projects',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('projects_entity_name_key').on(t.entityId, t.name)],
);

export const models = pgTable(
  'models',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    baseModel: text('base_model').notNull(),
    runId: text('run_id').notNull(),
    /** Highest step ever created; step numbers are never reused, even after deletion (docs/contract.md §2.4). */
    lastStep: integer('last_step').notNull().default(0),
    /**
     * Gradient steps reported by all of the model's jobs so far: the x of the next one on the model's training
     * curve (its `gradient_steps` run) is this + 1.
     */
    gradientSteps: integer('gradient_steps').notNull().default(0),
    /**
     * How many checkpoints the model has now: every write of `checkpoints` changes it in the same transaction or
     * statement (repositories/models.ts). Lists show it on every row, where counting cost PGlite about 0.2 ms per
     * 1000 checkpoints per model on every request. Not a trigger: a statement trigger doubled the cost of
     * creating a model (2 ms more per insert on PGlite).
     */
    checkpointCount: integer('checkpoint_count').notNull().default(0),
    /**
     * The model's auto-eval setting (docs/evals.md): an eval run of this set on every new checkpoint, queued in the
     * transaction that creates the checkpoint (repositories/evals.ts queueAutoEvalRun). Null: off.
     */
    autoEval: jsonb('auto_eval').$type<AutoEvalSetting>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('models_project_name_key').on(t.projectId, t.name),
    index('models_entity_created_idx').on(t.entityId, t.createdAt, t.id),
  ],
);

/**
 * A model's metric histories (run_metrics). `checkpoints`: the tracking run, one point per checkpoint step
 * (models.run_id). `gradient_steps`: every gradient_step of every job of the model, x = its position among all of
 * them (1-based), so that all jobs share one axis; created with the model's first gradient step.
 */
export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['checkpoints', 'gradient_steps'] })
      .notNull()
      .default('checkpoints'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('runs_model_kind_key').on(t.modelId, t.kind)],
);

export const runMetrics = pgTable(
  'run_metrics',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    step: integer('step').notNull(),
    value: doublePrecision('value').notNull(),
    updatedAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.name, t.step] })],
);

/**
 * When each point of a model's training curve (its `gradient_steps` run) was recorded, and how many trainable tokens
 * the model had been trained on through it: the wall-clock and tokens-trained x-axes of run comparison. One row per
 * x, written with the curve's points (a job's events batch shares its arrival time). Rows of curves recorded before
 * this table existed were backfilled by its migration: the time each point was stored, and the running sum of its
 * `num_trainable_tokens` (0 where a point had none).
 */
export const gradientStepMarks = pgTable(
  'gradient_step_marks',
  {
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    x: integer('x').notNull(),
    recordedAt: ts('recorded_at').notNull(),
    /** Σ num_trainable_tokens of the curve's points 1..x. */
    tokens: doublePrecision('tokens').notNull(),
  },
  (t) => [primaryKey({ columns: [t.modelId, t.x] })],
);

/**
 * Summaries of run_metrics over fixed step buckets (`bucket = step / width`, widths in ROLLUP_WIDTHS), kept in
 * step with every write. A chart of a 100k-step series reads ~1.5k of these rows instead of 100k points, and
 * the list of series names is a range scan of the coarsest width instead of a DISTINCT over every point.
 * Each row keeps the first, lowest, highest and last point of its bucket, which is what min/max/last
 * downsampling needs. `width` comes before `name` in the key so that one width of a run is contiguous.
 */
export const runMetricRollups = pgTable(
  'run_metric_rollups',
  {
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    width: integer('width').notNull(),
    name: text('name').notNull(),
    bucket: integer('bucket').notNull(),
    n: integer('n').notNull(),
    firstStep: integer('first_step').notNull(),
    firstValue: doublePrecision('first_value').notNull(),
    minStep: integer('min_step').notNull(),
    minValue: doublePrecision('min_value').notNull(),
    maxStep: integer('max_step').notNull(),
    maxValue: doublePrecision('max_value').notNull(),
    lastStep: integer('last_step').notNull(),
    lastValue: doublePrecision('last_value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.width, t.name, t.bucket] })],
);

export const checkpoints = pgTable(
  'checkpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    step: integer('step').notNull(),
    metrics: jsonb('metrics')
      .$type<Record<string, number>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** Artifact-store key of the weights; null for step 0, which serves the base model's weights. */
    artifactKey: text('artifact_key'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('checkpoints_model_step_key').on(t.modelId, t.step),
    // A model's default best checkpoint (DEFAULT_BEST_METRICS in lib/schemas/metric-direction.ts) is one index probe
    // each, not a jsonb scan over every checkpoint: the model list computes it for every row it shows. Step order
    // matches the tie rule (the later step wins): reward is read backward (highest value, then highest step), loss
    // forward (lowest value, then highest step).
    index('checkpoints_best_val_reward')
      .on(t.modelId, sql`((${t.metrics} ->> 'val/reward')::float8)`, t.step)
      .where(sql`jsonb_typeof(${t.metrics} -> 'val/reward') = 'number'`),
    index('checkpoints_best_val_loss')
      .on(t.modelId, sql`((${t.metrics} ->> 'val/loss')::float8)`, t.step.desc())
      .where(sql`jsonb_typeof(${t.metrics} -> 'val/loss') = 'number'`),
  ],
);

export const JOB_STATUSES = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Jobs deliberately do not cascade from models: deleting a model fails its open jobs, and pollers must
 * still be able to read the terminal event (docs/contract.md §2.2). entity_id keeps the job scoped after that.
 */
export const trainingJobs = pgTable(
  'training_jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id').notNull(),
    kind: text('kind', { enum: ['rl', 'sft'] }).notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull().default('QUEUED'),
    /** Normalised job configuration (RL experimental_config or SFT config + data reference). */
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    /** The latest checkpoint step when the job was accepted: train/* rollout metrics land there. */
    baseStep: integer('base_step'),
    resultStep: integer('result_step'),
    numSequences: integer('num_sequences'),
    completedSteps: integer('completed_steps').notNull().default(0),
    /** The x on the model's training curve just before this job's first gradient step (null: it took none). */
    firstGradientX: integer('first_gradient_x'),
    errorMessage: text('error_message'),
    workerId: text('worker_id'),
    heartbeatAt: ts('heartbeat_at'),
    /** Last time the job advanced (claim, event); a RUNNING job idle for too long is failed (docs/contract.md §3.6). */
    progressAt: ts('progress_at'),
    /** Set by the cancel endpoint; the worker sees it on its next heartbeat. */
    cancelRequestedAt: ts('cancel_requested_at'),
    attempts: integer('attempts').notNull().default(0),
    /** The user who submitted the job: a plain team member may cancel only their own jobs. */
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('training_jobs_model_created_idx').on(t.modelId, t.createdAt, t.id),
    index('training_jobs_status_idx').on(t.status, t.createdAt),
  ],
);

export const jobEvents = pgTable(
  'job_events',
  {
    // Keyset pagination orders by seq: uuids carry no order and timestamps can tie.
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: uuid('id').notNull().defaultRandom(),
    jobId: uuid('job_id')
      .notNull()
      .references(() => trainingJobs.id, { onDelete: 'cascade' }),
    type: text('type', { enum: ['training_started', 'gradient_step', 'training_ended', 'training_failed'] }).notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('job_events_id_key').on(t.id),
    index('job_events_job_seq_idx').on(t.jobId, t.seq),
    // The events list filtered by type (the job page's filter): a rare type (training_failed) in a job of a
    // million gradient steps is found by index, not by reading every event of the job.
    index('job_events_job_type_seq_idx').on(t.jobId, t.type, t.seq),
  ],
);

/** Trajectory groups as logged through /log (source "log") or submitted with an RL job (source "train"). */
export const trajectoryGroups = pgTable(
  'trajectory_groups',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: uuid('id').notNull().defaultRandom(),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    jobId: uuid('job_id').references(() => trainingJobs.id, { onDelete: 'set null' }),
    source: text('source', { enum: ['log', 'train'] }).notNull(),
    split: text('split').notNull(),
    step: integer('step').notNull(),
    groupIndex: integer('group_index').notNull(),
    numTrajectories: integer('num_trajectories').notNull(),
    rewardMean: doublePrecision('reward_mean'),
    rewardMin: doublePrecision('reward_min'),
    rewardMax: doublePrecision('reward_max'),
    /**
     * Every reward of the group (unscored trajectories left out), for the reward band of the model page's charts
     * (p10 to p90 per step): quantiles do not pool from means, and reading them out of `data` would parse every
     * stored trajectory. Null for groups stored before this column existed.
     */
    rewards: doublePrecision('rewards').array(),
    // json, not jsonb: trajectories are stored verbatim and may hold "\u0000" (a model can emit byte 0),
    // which jsonb refuses. They are only ever read back whole.
    data: json('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('trajectory_groups_id_key').on(t.id),
    index('trajectory_groups_model_step_idx').on(t.modelId, t.step, t.split, t.seq),
    // A model's groups in list order (listTrajectoryGroups without a step): without it, the planner walked the
    // primary key from the start, skipping every earlier model's groups.
    index('trajectory_groups_model_seq_idx').on(t.modelId, t.seq),
    index('trajectory_groups_job_idx').on(t.jobId, t.groupIndex),
  ],
);

/** Token usage of chat completions per entity, project, model and UTC day. */
export const usageRecords = pgTable(
  'usage_records',
  {
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    project: text('project').notNull(),
    model: text('model').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    requests: integer('requests').notNull().default(0),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.entityId, t.project, t.model, t.day] })],
);

/**
 * Versioned artifacts in the artifact store (datasets now; the files themselves live in lib/storage under
 * `prefix`). The unique index allocates versions safely when several uploads of one name race.
 */
export const artifacts = pgTable(
  'artifacts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    project: text('project').notNull(),
    name: text('name').notNull(),
    version: integer('version').notNull(),
    kind: text('kind', { enum: ['dataset'] }).notNull(),
    prefix: text('prefix').notNull(),
    files: jsonb('files').$type<{ name: string; size: number }[]>().notNull(),
    metadata: jsonb('metadata')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('artifacts_name_version_key').on(t.entityId, t.project, t.name, t.version)],
);

/**
 * Failed sign-in attempts per account (`account:<email>`) and per client address (`address:<ip>`), with the
 * back-off they earned. In the database, not in memory, so that every server instance sees the same count.
 */
export const authThrottle = pgTable('auth_throttle', {
  key: text('key').primaryKey(),
  failures: integer('failures').notNull().default(0),
  windowStartedAt: ts('window_started_at').notNull().defaultNow(),
  blockedUntil: ts('blocked_until'),
});

/**
 * Running sums of everything /log has received for one model, step and split, so that a second log to a
 * step pools its trajectories with the first (metrics of the union) instead of overwriting some keys and
 * keeping others. Cost per log is its own size, never the size of earlier logs.
 */
export const logMetricSums = pgTable(
  'log_metric_sums',
  {
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    step: integer('step').notNull(),
    split: text('split').notNull(),
    sums: jsonb('sums').$type<Record<string, unknown>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.modelId, t.step, t.split] })],
);

/**
 * Training workers that talked to this server (claim or heartbeat): what they can train and what they run.
 * A row is a registry, not a lease: the job's own lease (training_jobs.worker_id/heartbeat_at) decides who
 * holds a job; this table answers "is anyone able to train this?" and feeds the dashboard's worker list.
 */
export const trainingWorkers = pgTable(
  'training_workers',
  {
    id: text('id').primaryKey(),
    /** { backends: ['builtin' | 'hf'], base_models?: string[], kinds: ['rl' | 'sft'] } as the worker claimed. */
    capabilities: jsonb('capabilities').$type<Record<string, unknown>>().notNull(),
    /** What the worker says about itself: hostname, device, versions (shown on the dashboard). */
    info: jsonb('info')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    currentJobId: uuid('current_job_id'),
    firstSeenAt: createdAt(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
  },
  (t) => [index('training_workers_last_seen_idx').on(t.lastSeenAt)],
);

/**
 * Blind A/B votes from the playground: a person saw two checkpoints' answers to one prompt without knowing which
 * was which, and chose. Stored with the model so that its page can say which step people prefer.
 */
export const abVotes = pgTable(
  'ab_votes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    /** The checkpoint shown as A and as B. */
    aStep: integer('a_step').notNull(),
    bStep: integer('b_step').notNull(),
    winner: text('winner', { enum: ['a', 'b', 'tie', 'both_bad'] }).notNull(),
    prompt: text('prompt').notNull(),
    voterId: uuid('voter_id').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [index('ab_votes_model_idx').on(t.modelId, t.createdAt)],
);

/**
 * A Tinker SDK session (docs/tinker.md): a client process's `ServiceClient`. It heart-beats every 10 s; a session
 * not heard from for TUNEBOARD_TINKER_SESSION_MINUTES ends, closing its training clients (their models and saved
 * weights stay). Models it creates go to `projectId` (the SDK's project_id, else a project named `tinker`).
 */
export const tinkerSessions = pgTable(
  'tinker_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    sdkVersion: text('sdk_version').notNull(),
    tags: jsonb('tags').$type<string[]>().notNull(),
    userMetadata: jsonb('user_metadata').$type<Record<string, unknown>>(),
    createdAt: createdAt(),
    heartbeatAt: ts('heartbeat_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    index('tinker_sessions_open_idx')
      .on(t.heartbeatAt)
      .where(sql`${t.endedAt} is null`),
  ],
);

/**
 * A Tinker training client: a model (its id is the Tinker model_id) whose LoRA training state lives in the memory of
 * one Python worker (`workerId`, bound when a worker takes its create_model). Requests run in seq_id order:
 * every seq_id below `nextSeq` has run, failed or been skipped.
 */
export const tinkerTrainingClients = pgTable(
  'tinker_training_clients',
  {
    modelId: uuid('model_id')
      .primaryKey()
      .references(() => models.id, { onDelete: 'cascade' }),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => tinkerSessions.id, { onDelete: 'cascade' }),
    modelSeqId: integer('model_seq_id').notNull(),
    baseModel: text('base_model').notNull(),
    /** { rank, alpha, seed, train_mlp, train_attn, train_unembed } as docs/tinker.md §2.7 resolves them. */
    lora: jsonb('lora').$type<Record<string, unknown>>().notNull(),
    /** waiting (for a worker) → ready → closed | failed. */
    status: text('status', { enum: ['waiting', 'ready', 'closed', 'failed'] })
      .notNull()
      .default('waiting'),
    workerId: text('worker_id'),
    error: text('error'),
    errorCategory: text('error_category'),
    nextSeq: integer('next_seq').notNull().default(1),
    /** When the request at nextSeq was first waited for in vain (a gap), for the skip after 10 minutes. */
    gapSince: ts('gap_since'),
    optimSteps: integer('optim_steps').notNull().default(0),
    /** The dashboard's numbers accumulated over the forward_backward calls since the last optim_step. */
    pendingStats: jsonb('pending_stats').$type<Record<string, number>>(),
    /** The last optim_step's point of the training curve: a sampler save's checkpoint carries it as train/<name>. */
    lastMetrics: jsonb('last_metrics').$type<Record<string, number>>(),
    /** The SDK's user_metadata of create_model, returned with the training run. */
    userMetadata: jsonb('user_metadata').$type<Record<string, unknown>>(),
    createdAt: createdAt(),
    lastRequestAt: ts('last_request_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
  },
  (t) => [
    uniqueIndex('tinker_training_clients_session_seq_key').on(t.sessionId, t.modelSeqId),
    index('tinker_training_clients_worker_idx').on(t.workerId),
    index('tinker_training_clients_status_idx').on(t.status),
  ],
);

export { TINKER_REQUEST_KINDS, type TinkerRequestKind };

/**
 * A Tinker future: one request and, once it ran, its result (docs/tinker.md §2.2). Rows are kept an hour after they
 * finish; the payload is dropped as soon as the request has run. Not tied to the model by a foreign key: a client
 * that polls a request of a deleted model learns that it failed, instead of "unknown request".
 */
export const tinkerRequests = pgTable(
  'tinker_requests',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id'),
    samplingSessionId: uuid('sampling_session_id'),
    seqId: integer('seq_id'),
    /** 1: the server gave this request its seq_id (it came without one), so an explicit seq_id equal to it is no resend. */
    seqAssigned: integer('seq_assigned').notNull().default(0),
    kind: text('kind', { enum: TINKER_REQUEST_KINDS }).notNull(),
    idempotencyKey: text('idempotency_key'),
    status: text('status', { enum: ['queued', 'running', 'done', 'failed'] })
      .notNull()
      .default('queued'),
    payload: json('payload').$type<Record<string, unknown>>(),
    result: json('result').$type<Record<string, unknown>>(),
    error: text('error'),
    errorCategory: text('error_category'),
    workerId: text('worker_id'),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    uniqueIndex('tinker_requests_model_seq_key')
      .on(t.modelId, t.seqId)
      .where(sql`${t.seqId} is not null and ${t.modelId} is not null`),
    uniqueIndex('tinker_requests_sampling_seq_key')
      .on(t.samplingSessionId, t.seqId)
      .where(sql`${t.seqId} is not null and ${t.samplingSessionId} is not null`),
    uniqueIndex('tinker_requests_idempotency_key')
      .on(t.entityId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
    index('tinker_requests_model_open_idx')
      .on(t.modelId, t.seqId)
      .where(sql`${t.status} in ('queued', 'running')`),
    index('tinker_requests_create_queued_idx')
      .on(t.createdAt)
      .where(sql`${t.kind} = 'create_model' and ${t.status} = 'queued'`),
    index('tinker_requests_finished_idx').on(t.finishedAt),
  ],
);

/** A Tinker sampling client: what `asample` samples from, a base model or a model's checkpoint. */
export const tinkerSamplingSessions = pgTable(
  'tinker_sampling_sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    sessionId: uuid('session_id')
      .notNull()
      .references(() => tinkerSessions.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    baseModel: text('base_model').notNull(),
    modelId: uuid('model_id').references(() => models.id, { onDelete: 'cascade' }),
    /** The checkpoint it samples; null with a model = it was deleted since (sampling then says so). */
    checkpointId: uuid('checkpoint_id').references(() => checkpoints.id, { onDelete: 'set null' }),
    modelPath: text('model_path'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('tinker_sampling_sessions_session_seq_key').on(t.sessionId, t.seq)],
);

/**
 * Weights saved through the Tinker API, by their `tinker://` name: training states (adapter + AdamW state, kind
 * `training`) and sampler weights (kind `sampler`, each also a checkpoint of the model). Files live under
 * `prefix` in the artifact store.
 */
export const tinkerWeights = pgTable(
  'tinker_weights',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ['training', 'sampler'] }).notNull(),
    name: text('name').notNull(),
    checkpointId: uuid('checkpoint_id').references(() => checkpoints.id, { onDelete: 'cascade' }),
    prefix: text('prefix').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    /** Unnamed sampler saves (save_weights_and_get_sampling_client): only the latest few are kept. */
    ephemeral: integer('ephemeral').notNull().default(0),
    createdAt: createdAt(),
    expiresAt: ts('expires_at'),
  },
  (t) => [
    uniqueIndex('tinker_weights_model_kind_name_key').on(t.modelId, t.kind, t.name),
    index('tinker_weights_expires_idx')
      .on(t.expiresAt)
      .where(sql`${t.expiresAt} is not null`),
  ],
);

/**
 * Download links of saved weights (the SDK's `get_checkpoint_archive_url`, followed by a plain HTTP GET with no API
 * key): a random token, stored as its hash, valid for 15 minutes.
 */
export const tinkerArchiveLinks = pgTable('tinker_archive_links', {
  tokenHash: text('token_hash').primaryKey(),
  weightsId: uuid('weights_id')
    .notNull()
    .references(() => tinkerWeights.id, { onDelete: 'cascade' }),
  expiresAt: ts('expires_at').notNull(),
});

/**
 * Eval sets (docs/evals.md): a JSONL of examples, versioned like datasets (one row per version, never changed). The
 * examples are rows of eval_examples, so that a page of them is an index range, not a parse of a stored file.
 */
export const evalSets = pgTable(
  'eval_sets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    project: text('project').notNull(),
    name: text('name').notNull(),
    version: integer('version').notNull(),
    numExamples: integer('num_examples').notNull(),
    sha256: text('sha256').notNull(),
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('eval_sets_name_version_key').on(t.entityId, t.project, t.name, t.version),
    index('eval_sets_entity_created_idx').on(t.entityId, t.createdAt, t.id),
  ],
);

/** One example of an eval set: `idx` is its 0-based position among the file's examples. */
export const evalExamples = pgTable(
  'eval_examples',
  {
    setId: uuid('set_id')
      .notNull()
      .references(() => evalSets.id, { onDelete: 'cascade' }),
    idx: integer('idx').notNull(),
    /** The prompt (a trailing assistant message taken as the reference is not part of it). */
    messages: jsonb('messages').$type<Record<string, unknown>[]>().notNull(),
    /**
     * The reference as JSON text; null: the example has none. Text, not jsonb: Drizzle parses a jsonb column's value a
     * second time when the driver hands it a string, so a reference "4" came back as the number 4.
     */
    reference: text('reference'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
  },
  (t) => [primaryKey({ columns: [t.setId, t.idx] })],
);

export const EVAL_RUN_STATUSES = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;

/**
 * Eval runs: one set scored on 1-8 targets, run by a server process (lib/services/eval-runner.ts) that claims it with
 * a lease (`lease_owner`, `lease_expires_at`, renewed while it runs): a run whose lease ran out (its server died) is
 * claimed again and resumes, skipping the samples already in eval_results.
 */
export const evalRuns = pgTable(
  'eval_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The set's entity: the run is visible to whoever sees the set. */
    entityId: uuid('entity_id')
      .notNull()
      .references(() => entities.id, { onDelete: 'cascade' }),
    evalSetId: uuid('eval_set_id')
      .notNull()
      .references(() => evalSets.id, { onDelete: 'cascade' }),
    name: text('name'),
    status: text('status', { enum: EVAL_RUN_STATUSES }).notNull().default('QUEUED'),
    error: text('error'),
    /** [{name, model_id, step}], resolved at creation. */
    targets: jsonb('targets').$type<{ name: string; model_id: string | null; step: number | null }[]>().notNull(),
    scorers: jsonb('scorers').$type<Record<string, unknown>[]>().notNull(),
    sampling: jsonb('sampling').$type<Record<string, unknown>>().notNull(),
    n: integer('n').notNull(),
    progressDone: integer('progress_done').notNull().default(0),
    progressTotal: integer('progress_total').notNull(),
    summary: jsonb('summary')
      .$type<{ target: string; scorer: string; mean: number; passed: number; total: number }[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /** The user whose scope resolves the targets and the judge while the run executes. */
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    /** An auto-eval run: the checkpoint it was queued for (one run per checkpoint). */
    autoModelId: uuid('auto_model_id'),
    autoStep: integer('auto_step'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: ts('lease_expires_at'),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('eval_runs_entity_created_idx').on(t.entityId, t.createdAt, t.id),
    index('eval_runs_set_idx').on(t.evalSetId),
    index('eval_runs_open_idx')
      .on(t.createdAt)
      .where(sql`${t.status} in ('QUEUED', 'RUNNING')`),
    uniqueIndex('eval_runs_auto_key')
      .on(t.autoModelId, t.autoStep)
      .where(sql`${t.autoModelId} is not null`),
  ],
);

/** A run's events (eval_started, eval_progress, …), paged by seq. */
export const evalRunEvents = pgTable(
  'eval_run_events',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: uuid('id').notNull().defaultRandom(),
    runId: uuid('run_id')
      .notNull()
      .references(() => evalRuns.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    message: text('message').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('eval_run_events_run_seq_idx').on(t.runId, t.seq)],
);

export interface EvalScoreValue {
  score: number;
  passed: boolean;
  judge_prompt?: unknown;
  verdict?: string;
  comment?: string;
  error?: string;
}

/** One sample: a target's `sample`-th answer to one example, and its scores by scorer name. */
export const evalResults = pgTable(
  'eval_results',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => evalRuns.id, { onDelete: 'cascade' }),
    exampleIdx: integer('example_idx').notNull(),
    targetIdx: integer('target_idx').notNull(),
    sample: integer('sample').notNull(),
    /** Null when the answer could not be generated (`error` says why) or the row holds only client scores. */
    text: text('text'),
    finishReason: text('finish_reason'),
    error: text('error'),
    scores: jsonb('scores')
      .$type<Record<string, EvalScoreValue>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.exampleIdx, t.targetIdx, t.sample] })],
);
