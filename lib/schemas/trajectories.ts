import { z } from 'zod';
import { idSchema, limitQuery, listEnvelope, metricsSchema, queryInt, timestampSchema } from './common';

export const logResponseSchema = z.object({
  success: z.literal(true),
  step: z.int().describe('The checkpoint step the metrics were stored on'),
  metrics: metricsSchema.describe('The stored keys, as `{split}/{name}`'),
});

/** Dashboard extension: a stored group with its summary. */
export const storedTrajectoryGroupSchema = z.object({
  id: idSchema,
  step: z.int(),
  split: z.string(),
  source: z.enum(['log', 'train']),
  job_id: idSchema.nullable(),
  group_index: z.int(),
  num_trajectories: z.int(),
  reward_mean: z.number().nullable(),
  reward_min: z.number().nullable(),
  reward_max: z.number().nullable(),
  created_at: timestampSchema,
  group: z.record(z.string(), z.unknown()),
});
export const trajectoryGroupListSchema = listEnvelope(storedTrajectoryGroupSchema);

export const listTrajectoriesQuerySchema = z.object({
  step: queryInt().pipe(z.int().min(0)).optional(),
  split: z.string().optional(),
  source: z.enum(['log', 'train']).optional(),
  after: z.string().optional(),
  limit: limitQuery,
});

export const HISTORY_AXES = ['checkpoint', 'gradient_step'] as const;
export type HistoryAxis = (typeof HISTORY_AXES)[number];

export const historyQuerySchema = z.object({
  axis: z
    .enum(HISTORY_AXES)
    .optional()
    .default('checkpoint')
    .describe(
      'checkpoint: one point per checkpoint step (the run). gradient_step: every gradient_step of every job of the model on one axis, x = its position among them; `segments` say which job each range is',
    ),
  keys: z.string().optional().describe('Comma-separated metric names; all when absent'),
  max_points: queryInt().pipe(z.int().min(10).max(100_000)).optional().default(1000),
  from_step: queryInt().pipe(z.int().min(0)).optional().describe('Only steps ≥ from_step (a zoomed chart)'),
  to_step: queryInt().pipe(z.int().min(0)).optional().describe('Only steps ≤ to_step'),
});

export const historySeriesSchema = z.object({
  name: z.string(),
  total_points: z.int(),
  points: z.array(z.tuple([z.int(), z.number()])).describe('[step, value] pairs in step order'),
});
export const historyBandSchema = z.object({
  name: z.string().describe('The reward series the band belongs to, e.g. train/reward'),
  points: z
    .array(z.tuple([z.int(), z.number(), z.number()]))
    .describe('[step, p10, p90] of every stored trajectory reward of that split, per step or bucket of steps'),
});
export const historySegmentSchema = z.object({
  job_id: z.string(),
  type: z.enum(['rl', 'sft']),
  status: z.enum(['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED']),
  first_x: z.int(),
  last_x: z.int(),
  checkpoint_step: z.int().nullable().describe('The checkpoint the job created (COMPLETED), else null'),
});
export type HistorySegment = z.infer<typeof historySegmentSchema>;

export const lengthPinningSchema = z
  .object({
    split: z.string(),
    steps: z.tuple([z.int(), z.int()]).describe('The first and the last step judged'),
    length_share_from: z
      .number()
      .describe('Share of completions with finish_reason "length" in the first third of the steps'),
    length_share_to: z.number().describe('The same share in the latest third'),
    tokens_from: z
      .number()
      .nullable()
      .describe('Mean completion tokens (choices with logprobs) in the first third; null without logprobs'),
    tokens_to: z.number().nullable(),
    token_max: z.number().nullable().describe('The longest completion seen, in tokens; null without logprobs'),
  })
  .describe('Completions that came to fill the token limit: a possible reward hack, read from the stored trajectories');
export type LengthPinningDto = z.infer<typeof lengthPinningSchema>;

export const historySchema = z.object({
  run_id: z.string(),
  series: z.array(historySeriesSchema),
  bands: z
    .array(historyBandSchema)
    // Absent from older servers' answers (and the dashboard's own test stand-ins): no bands.
    .default([])
    .describe('Reward spread per step (p10 to p90) for each requested {split}/reward series with stored trajectories'),
  segments: z
    .array(historySegmentSchema)
    .default([])
    .describe('axis=gradient_step: the x range of each job that took a gradient step, in x order; [] otherwise'),
  marks: z
    .array(z.tuple([z.int(), z.number(), z.number()]))
    .default([])
    .describe(
      'axis=gradient_step: [x, recorded at (Unix ms), trainable tokens through x] at up to max_points x evenly spaced over the curve (its first and last included), for wall-clock and tokens-trained x-axes by interpolation; [] otherwise',
    ),
  length_pinning: z
    .array(lengthPinningSchema)
    // Absent from older servers' answers: no signal.
    .default([])
    .describe(
      'axis=checkpoint, whole history: per split, completions (of /log calls and RL jobs) that came to stop at the token limit; [] otherwise',
    ),
});

/** Dashboard extension: which steps hold stored trajectory groups, newest first, with a summary per split. */
export const trajectoryStepSplitSchema = z.object({
  split: z.string(),
  groups: z.int(),
  trajectories: z.int(),
  reward_mean: z.number().nullable().describe('Mean reward over every trajectory of the split at this step'),
});
export const trajectoryStepSchema = z.object({
  step: z.int(),
  groups: z.int(),
  trajectories: z.int(),
  reward_mean: z.number().nullable().describe('Mean reward over every trajectory at this step'),
  reward_min: z.number().nullable(),
  reward_max: z.number().nullable(),
  sources: z.array(z.enum(['log', 'train'])).describe('log: sent to /log; train: submitted with an RL job'),
  splits: z.array(trajectoryStepSplitSchema).describe('In name order'),
});
export type TrajectoryStepDto = z.infer<typeof trajectoryStepSchema>;
export const trajectoryStepListSchema = z.object({
  object: z.literal('list'),
  data: z.array(trajectoryStepSchema),
  has_more: z.boolean().describe('Pass the last step as `before` for the next page'),
});
export type TrajectoryStepListDto = z.infer<typeof trajectoryStepListSchema>;

export const listTrajectoryStepsQuerySchema = z.object({
  split: z.string().optional(),
  source: z.enum(['log', 'train']).optional(),
  before: queryInt().pipe(z.int()).optional().describe('Only steps lower than this one (the cursor)'),
  limit: limitQuery,
});
