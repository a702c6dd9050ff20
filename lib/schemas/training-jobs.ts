import { z } from 'zod';
import {
  idSchema,
  limitQuery,
  listEnvelope,
  MAX_LEARNING_RATE,
  queryBool,
  rangedNumber,
  timestampSchema,
} from './common';

/**
 * A number with a range checked as one of our semantic checks: docs/contract.md §3.1 makes an out-of-range
 * experimental_config value a 422 `value_error`, not pydantic's less_than_equal & co. The meta keeps the
 * range in the generated JSON Schema.
 */

/**
 * LoRA settings for Hugging Face models (the Python worker trains a PEFT adapter). Absent keys take the
 * worker's documented defaults (rank 16, alpha 32, dropout 0, all linear layers of attention and MLP).
 * Built-in models train all their weights and have no use for them.
 */
export const loraSettingsSchema = z.object({
  lora_rank: z.int().min(1).max(1024).nullish(),
  lora_alpha: rangedNumber({ gt: 0, max: 65536 }, 'lora_alpha must be greater than 0 and at most 65536').nullish(),
  lora_dropout: rangedNumber({ min: 0, max: 0.99 }, 'lora_dropout must be between 0 and 0.99').nullish(),
  lora_target_modules: z
    .union([z.literal('all-linear'), z.array(z.string().min(1).max(200)).min(1).max(200)])
    .nullish(),
});
export const LORA_KEYS = ['lora_rank', 'lora_alpha', 'lora_dropout', 'lora_target_modules'] as const;

export interface ResolvedLora {
  rank?: number;
  alpha?: number;
  dropout?: number;
  target_modules?: string[] | 'all-linear';
}

/** The LoRA settings a job asked for (the worker fills in its defaults for the rest). */
export function resolveLora(raw: z.infer<typeof loraSettingsSchema> | null | undefined): ResolvedLora {
  const c = raw ?? {};
  return {
    ...(c.lora_rank != null ? { rank: c.lora_rank } : {}),
    ...(c.lora_alpha != null ? { alpha: c.lora_alpha } : {}),
    ...(c.lora_dropout != null ? { dropout: c.lora_dropout } : {}),
    ...(c.lora_target_modules != null ? { target_modules: c.lora_target_modules } : {}),
  };
}

/**
 * Keys a client sent that no trainer acts on (unknown keys are accepted, compat). They are kept with the job
 * so that a worker can say which settings it did not honour instead of dropping them silently. Only scalar
 * values are kept (a setting's number or flag is what a report needs).
 */
export function extraSettings(raw: Record<string, unknown> | null | undefined, known: readonly string[]) {
  const out: Record<string, number | boolean | string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (known.includes(k) || v === null || v === undefined) continue;
    if (typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (typeof v === 'string') out[k] = v.slice(0, 200);
    if (Object.keys(out).length >= 50) break;
  }
  return out;
}

/**
 * RL `experimental_config` (docs/contract.md §3.1): every key nullable (null = default), unknown keys ignored
 * (later clients add keys), wrong types 422, out-of-range values 422 value_error.
 */
export const rlExperimentalConfigSchema = z.looseObject({
  advantage_balance: rangedNumber({ min: -1, max: 1 }, 'advantage_balance must be between -1 and 1').nullish(),
  epsilon: rangedNumber({ min: 0 }, 'epsilon must be greater than or equal to 0').nullish(),
  epsilon_high: rangedNumber({ min: 0 }, 'epsilon_high must be greater than or equal to 0').nullish(),
  kimi_k2_tau: z.number().nullish(),
  alt_k2_tau: z.number().nullish(),
  learning_rate: rangedNumber(
    { gt: 0, max: MAX_LEARNING_RATE },
    `learning_rate must be greater than 0 and at most ${MAX_LEARNING_RATE}`,
  ).nullish(),
  mask_prob_ratio: z.boolean().nullish(),
  max_negative_advantage_importance_sampling_weight: rangedNumber(
    { min: 0 },
    'max_negative_advantage_importance_sampling_weight must be greater than or equal to 0',
  ).nullish(),
  ppo: z.boolean().nullish(),
  precalculate_logprobs: z.boolean().nullish(),
  scale_rewards: z.boolean().nullish(),
  importance_sampling_level: z.string().nullish(),
  loss_fn: z.string().nullish(),
  normalize_advantages: z.boolean().nullish(),
  allow_training_without_logprobs: z.boolean().nullish(),
  ...loraSettingsSchema.shape,
});
export type RlExperimentalConfig = z.infer<typeof rlExperimentalConfigSchema>;

export const IMPORTANCE_SAMPLING_LEVELS = ['token', 'sequence', 'average', 'geometric_average'] as const;

/** The configuration an RL job actually trains with: every default resolved (docs/contract.md §3.1, §5.7). */
export const resolvedRlConfigSchema = z.object({
  loss: z.enum(['ppo', 'cispo']),
  epsilon: z.number(),
  epsilon_high: z.number(),
  advantage_balance: z.number(),
  tau: z.number().nullable(),
  learning_rate: z.number(),
  mask_prob_ratio: z.boolean(),
  max_negative_advantage_importance_sampling_weight: z.number().nullable(),
  precalculate_logprobs: z.boolean(),
  scale_rewards: z.boolean(),
  importance_sampling_level: z.enum(IMPORTANCE_SAMPLING_LEVELS),
  allow_training_without_logprobs: z.boolean(),
});
export type ResolvedRlConfig = z.infer<typeof resolvedRlConfigSchema>;

export const RL_DEFAULT_LEARNING_RATE = 5e-6;

export function resolveRlConfig(raw: RlExperimentalConfig | null | undefined): ResolvedRlConfig {
  const c = raw ?? {};
  // `ppo` decides; `loss_fn` (later clients) only when `ppo` is null. Default PPO so that Dec-2025 clients,
  // which send ppo:null, get their era's loss (docs/contract.md §5.7).
  const loss: 'ppo' | 'cispo' = c.ppo != null ? (c.ppo ? 'ppo' : 'cispo') : c.loss_fn === 'cispo' ? 'cispo' : 'ppo';
  const epsilon = c.epsilon ?? (loss === 'ppo' ? 0.2 : 1.0);
  const epsilonHigh = c.epsilon_high ?? (loss === 'ppo' ? epsilon : 4.0);
  const tau = c.kimi_k2_tau ?? c.alt_k2_tau ?? null;
  const maxNeg = c.max_negative_advantage_importance_sampling_weight ?? null;
  const level = (IMPORTANCE_SAMPLING_LEVELS as readonly string[]).includes(c.importance_sampling_level ?? '')
    ? (c.importance_sampling_level as ResolvedRlConfig['importance_sampling_level'])
    : 'token';
  return {
    loss,
    epsilon,
    epsilon_high: epsilonHigh,
    advantage_balance: c.advantage_balance ?? 0,
    // 0 means off for both τ and the importance-weight cap (docs/contract.md §3.1).
    tau: tau === 0 ? null : tau,
    learning_rate: c.learning_rate ?? RL_DEFAULT_LEARNING_RATE,
    mask_prob_ratio: c.mask_prob_ratio ?? false,
    max_negative_advantage_importance_sampling_weight: maxNeg === 0 ? null : maxNeg,
    precalculate_logprobs: c.precalculate_logprobs ?? false,
    scale_rewards: c.scale_rewards ?? c.normalize_advantages ?? true,
    importance_sampling_level: level,
    allow_training_without_logprobs: c.allow_training_without_logprobs ?? false,
  };
}

/** Keys of experimental_config that resolveRlConfig reads; any other is an extra setting. */
export const RL_KNOWN_KEYS = [...Object.keys(rlExperimentalConfigSchema.shape)] as const;

/**
 * Settings that later clients send and the engines do not implement, each with the value that means "off".
 * A job given another value trains without it, and says so in its training_started event (`ignored/<key>`)
 * instead of dropping it silently. Performance knobs that cannot change the result (plot_tensors,
 * packed_sequence_length, logprob_calculation_chunk_size) are not reported.
 */
const UNIMPLEMENTED_RL_SETTINGS: Record<string, unknown> = {
  kl_penalty_coef: 0,
  kl_penalty_source: null,
  kl_ref_adapter_path: null,
  scale_learning_rate_by_reward_std_dev: false,
  truncated_importance_sampling: null,
  num_trajectories_learning_rate_multiplier_power: 0,
};

/** `ignored/<key>` → the value as a number (booleans 1/0, other values 1), for each setting in effect but ignored. */
export function ignoredRlSettings(raw: Record<string, unknown> | null | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, off] of Object.entries(UNIMPLEMENTED_RL_SETTINGS)) {
    const value = raw?.[key];
    if (value === undefined || value === null || value === off) continue;
    out[`ignored/${key}`] =
      typeof value === 'number' && Number.isFinite(value) ? value : typeof value === 'boolean' ? Number(value) : 1;
  }
  const level = raw?.importance_sampling_level;
  if (typeof level === 'string' && !(IMPORTANCE_SAMPLING_LEVELS as readonly string[]).includes(level)) {
    out['ignored/importance_sampling_level'] = 1;
  }
  return out;
}

export { MAX_LEARNING_RATE };
export const MAX_SFT_EPOCHS = 1000;
/** Half: a larger held-out share would leave less to train on than to measure with. */
export const MAX_VALIDATION_SPLIT = 0.5;

const learningRateRange = `at most ${MAX_LEARNING_RATE}`;

export const sftConfigSchema = z.looseObject({
  batch_size: z.union([z.int().min(1), z.literal('auto')]).nullish(),
  // A per-batch list may reach 0: linear and cosine schedules (ART's train_sft_from_file) end there. NaN and
  // ±Infinity cannot be written in JSON, so z.number() already refuses them.
  learning_rate: z
    .union([
      rangedNumber({ gt: 0, max: MAX_LEARNING_RATE }, `learning_rate must be greater than 0 and ${learningRateRange}`),
      z
        .array(
          rangedNumber(
            { min: 0, max: MAX_LEARNING_RATE },
            `each learning_rate entry must be between 0 and ${MAX_LEARNING_RATE}`,
          ),
        )
        .min(1),
    ])
    .nullish(),
  epochs: z.int().min(1).max(MAX_SFT_EPOCHS).nullish().describe('Passes over the dataset (default 1)'),
  assistant_turns: z.enum(['all', 'last']).nullish(),
  validation_split: rangedNumber(
    { gt: 0, max: MAX_VALIDATION_SPLIT },
    `validation_split must be greater than 0 and at most ${MAX_VALIDATION_SPLIT}`,
  )
    .nullish()
    .describe(
      'Extension: the share of examples held out of training; val/loss and val/token_accuracy are logged after each epoch',
    ),
  start_from: z
    .union([z.enum(['latest', 'base']), z.int().min(0)])
    .nullish()
    .describe("Extension: train from the latest checkpoint (default), the base model ('base'), or a checkpoint step"),
  ...loraSettingsSchema.shape,
});
const SFT_KNOWN_KEYS = [...Object.keys(sftConfigSchema.shape)];

export const createSftJobBodySchema = z.object({
  model_id: idSchema,
  training_data_url: z.string().min(1),
  config: sftConfigSchema.nullish(),
  experimental_config: z.looseObject(loraSettingsSchema.shape).nullish(),
  assistant_turns: z.enum(['all', 'last']).nullish(),
});

/** The resolved SFT config plus what Hugging Face workers read: LoRA settings and settings nobody acts on. */
export function sftWorkerSettings(body: z.infer<typeof createSftJobBodySchema>) {
  const pick = (c: Record<string, unknown> | null | undefined) =>
    Object.fromEntries(LORA_KEYS.flatMap((k) => (c?.[k] != null ? [[k, c[k]]] : []))) as z.infer<
      typeof loraSettingsSchema
    >;
  const lora = resolveLora({ ...pick(body.experimental_config), ...pick(body.config) });
  const extra = {
    ...extraSettings(body.experimental_config, [...LORA_KEYS]),
    ...extraSettings(body.config, SFT_KNOWN_KEYS),
  };
  return { lora, extra_settings: extra };
}

export const SFT_DEFAULT_BATCH_SIZE = 2;
export const SFT_DEFAULT_LEARNING_RATE = 5e-5;

/**
 * What the dashboard's fine-tune form starts with. The API's own defaults above stay as they are (clients such as
 * ART send their own settings, and changing what an omitted field means would change their runs); the form's must
 * teach on the first try: 20 examples of one fact, on the built-in model, answer it exactly after these settings
 * (50 steps, about 1.4 s on one core; 5 epochs, or 10 at 5e-5, did not). tests/jobs/sft-form-defaults.test.ts
 * fails if they are weakened.
 */
export const SFT_FORM_DEFAULTS = { batchSize: 4, learningRate: 1e-3, epochs: 10 } as const;

/** Optimizer steps of an SFT job: consecutive batches per epoch (the last one may be short), every epoch. */
export function sftStepCount(examples: number, batchSize: number, epochs: number): number {
  return Math.ceil(examples / batchSize) * epochs;
}

export const resolvedSftConfigSchema = z.object({
  batch_size: z.int(),
  learning_rate: z.union([z.number(), z.array(z.number())]),
  // Jobs stored before epochs existed trained one pass.
  epochs: z.int().min(1).default(1),
  assistant_turns: z.enum(['all', 'last']),
  // Jobs stored before these existed held nothing out and trained from the latest checkpoint.
  validation_split: z.number().min(0).max(MAX_VALIDATION_SPLIT).default(0),
  start_from: z.union([z.enum(['latest', 'base']), z.int().min(0)]).default('latest'),
});
export type ResolvedSftConfig = z.infer<typeof resolvedSftConfigSchema>;

export function resolveSftConfig(body: z.infer<typeof createSftJobBodySchema>): ResolvedSftConfig {
  const c = body.config ?? {};
  return {
    batch_size: typeof c.batch_size === 'number' ? c.batch_size : SFT_DEFAULT_BATCH_SIZE,
    learning_rate: c.learning_rate ?? SFT_DEFAULT_LEARNING_RATE,
    epochs: c.epochs ?? 1,
    assistant_turns: c.assistant_turns ?? body.assistant_turns ?? 'all',
    validation_split: c.validation_split ?? 0,
    start_from: c.start_from ?? 'latest',
  };
}

/**
 * How many of `examples` a validation split holds out: the share rounded, but at least one when a split is asked
 * for and never all (one example always trains). 0 for datasets of fewer than two examples.
 */
export function validationCount(examples: number, split: number): number {
  if (!(split > 0) || examples < 2) return 0;
  return Math.min(examples - 1, Math.max(1, Math.round(examples * split)));
}

export const jobCreatedSchema = z.object({ id: idSchema });

export const jobStatusSchema = z.enum(['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED']);

/** GET job: `id` is the documented field; the rest are our extensions (docs/contract.md §3.3). */
export const trainingJobSchema = z.object({
  id: idSchema,
  model_id: idSchema,
  type: z.enum(['rl', 'sft']),
  status: jobStatusSchema,
  created_at: timestampSchema,
  started_at: timestampSchema.nullable(),
  finished_at: timestampSchema.nullable(),
  error_message: z.string().nullable(),
  step: z.int().nullable().describe('The new checkpoint step once COMPLETED'),
  base_step: z.int().nullable().describe('Latest checkpoint step when the job was accepted'),
  num_sequences: z.int().nullable().describe('Optimizer steps to come, known once RUNNING'),
  completed_steps: z.int(),
  config: z.record(z.string(), z.unknown()),
  waiting_reason: z
    .string()
    .nullable()
    .describe(
      'Extension: why a QUEUED job has not started (e.g. no connected worker can train its base model); null otherwise',
    ),
  cancelled: z
    .boolean()
    .describe('Extension: a user cancelled the job. Its status stays FAILED, as clients of the interface expect'),
});
export type TrainingJobDto = z.infer<typeof trainingJobSchema>;

export const trainingJobListSchema = listEnvelope(trainingJobSchema);

/** Extension: a job in an entity-wide list, with the name of its model. */
export const entityJobSchema = trainingJobSchema.extend({
  model: z.object({ id: idSchema, entity: z.string(), project: z.string(), name: z.string() }),
  speed: z
    .object({
      step_seconds: z.number().describe("The latest gradient step's duration"),
      tokens_per_second: z.number().nullable().describe('Its trained tokens per second'),
    })
    .nullable()
    .describe(
      "Extension: the speed of the job's latest gradient step (its step_seconds and tokens_per_second); null before the first step, or from a worker that does not report them",
    ),
});
export type EntityJobDto = z.infer<typeof entityJobSchema>;
export const entityJobListSchema = listEnvelope(entityJobSchema);

export const listEntityJobsQuerySchema = z.object({
  entity: z.string().optional().describe("Only this entity's jobs (default: every entity the caller belongs to)"),
  status: jobStatusSchema.optional(),
  active: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true'))
    .describe('true: only RUNNING and QUEUED jobs, running first'),
  model_id: idSchema.optional().describe("Only this model's jobs"),
  project: z.string().min(1).max(200).optional().describe("Only jobs of this project's models"),
  kind: z.enum(['rl', 'sft']).optional().describe('Only RL or only SFT jobs'),
  q: z
    .string()
    .max(200)
    .optional()
    .describe('Search: jobs whose model name, project or id contains this text (case-insensitive)'),
  after: z.string().optional(),
  limit: limitQuery,
});

export const listJobsQuerySchema = z.object({
  after: z.string().optional(),
  limit: limitQuery,
  status: jobStatusSchema.optional(),
});

export const jobIdParamsSchema = z.object({ training_job_id: idSchema });

export const EVENT_TYPES = ['training_started', 'gradient_step', 'training_ended', 'training_failed'] as const;

export const jobEventSchema = z.object({
  id: idSchema,
  type: z.enum(EVENT_TYPES),
  data: z.record(z.string(), z.unknown()),
  created_at: timestampSchema,
});
export type JobEventDto = z.infer<typeof jobEventSchema>;

export const jobEventListSchema = listEnvelope(jobEventSchema);

export const listEventsQuerySchema = z.object({
  after: z.string().optional().describe('Return events strictly after this event id (in the list order)'),
  before: z
    .string()
    .optional()
    .describe('Extension: the page of events just before this event id (in the list order); not with after'),
  // Not named `order`: a stray `order` on this route is ignored and events stay chronological (docs/contract.md §3.4).
  newest_first: queryBool()
    .optional()
    .default(false)
    .describe('Extension: list newest first instead of chronologically'),
  event_type: z.enum(EVENT_TYPES).optional().describe('Extension: only events of this type'),
  limit: limitQuery,
});
