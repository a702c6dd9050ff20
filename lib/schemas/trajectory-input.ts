import { z } from 'zod';
import { idSchema, jsonInt } from './common';
import { rlExperimentalConfigSchema } from './training-jobs';
import { autoEvalBodySchema } from './evals';

/*
 * The trajectory groups clients send (/log and RL jobs), as the server validates them. Apart from trajectories.ts,
 * which the dashboard imports (its answers' schemas): these schemas and their refinements are server-side only, and
 * the model page's first load is at its size budget.
 */

/**
 * Only shapes are validated (docs/contract.md §4.2 [DEC]): message internals pass through untouched, as ART passes
 * them. Loose objects keep every key so stored trajectories can be browsed exactly as sent.
 */
const messageOrChoiceSchema = z.looseObject({});

const additionalHistorySchema = z.looseObject({
  messages_and_choices: z.array(messageOrChoiceSchema),
  tools: z.array(z.unknown()).nullish(),
});

/**
 * Limits on the metric names a /log or RL job stores (docs/contract.md §2.5). Each name becomes a run series with
 * four rollup rows, and a step's names are written in one statement, so they are bounded rather than left to fail in
 * the database: 1,500 names overflowed PostgreSQL's 65,535 bind parameters. U+0000 cannot be stored in a text column.
 */
export const MAX_METRIC_NAMES = 1000;
export const MAX_METRIC_NAME_LENGTH = 200;

// Keys are checked in a refinement rather than by a key schema, whose issue zod reports as "Invalid key in record"
// without the reason.
const metricsRecordSchema = z
  .record(z.string(), z.unknown())
  .superRefine((metrics, ctx) => {
    for (const name of Object.keys(metrics)) {
      if (name.includes('\u0000'))
        ctx.addIssue({ code: 'custom', path: [name], message: 'metric names must not contain U+0000' });
      else if (name.length > MAX_METRIC_NAME_LENGTH)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `metric names are at most ${MAX_METRIC_NAME_LENGTH} characters (this one has ${name.length})`,
        });
    }
  })
  .nullish();

export const trajectorySchema = z.looseObject({
  messages_and_choices: z.array(messageOrChoiceSchema),
  // Required, as ART's Trajectory requires it: a missing reward is a client bug, never a 0 (docs/contract.md §4.2).
  reward: z.number(),
  tools: z.array(z.unknown()).nullish(),
  additional_histories: z.array(additionalHistorySchema).nullish(),
  metrics: metricsRecordSchema,
  metadata: z.record(z.string(), z.unknown()).nullish(),
  logs: z.array(z.unknown()).nullish(),
  initial_policy_version: jsonInt().nullish(),
  final_policy_version: jsonInt().nullish(),
});
export type Trajectory = z.infer<typeof trajectorySchema>;

export const trajectoryGroupSchema = z.looseObject({
  trajectories: z.array(trajectorySchema),
  exceptions: z.array(z.unknown()).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  metrics: metricsRecordSchema,
  logs: z.array(z.unknown()).nullish(),
});
export type TrajectoryGroup = z.infer<typeof trajectoryGroupSchema>;

/** The distinct metric names a batch of groups would store: custom ones, `group_`-prefixed group ones, built-ins. */
export function metricNamesOf(groups: readonly TrajectoryGroup[]): Set<string> {
  const names = new Set(['reward', 'reward_std_dev', 'exception_rate']);
  for (const group of groups) {
    for (const t of group.trajectories) for (const key of Object.keys(t.metrics ?? {})) names.add(key);
    for (const key of Object.keys(group.metrics ?? {})) names.add(`group_${key}`);
  }
  return names;
}

/** A refinement for bodies carrying `trajectory_groups`: at most MAX_METRIC_NAMES distinct names in one call. */
export function checkMetricNameCount(body: { trajectory_groups: TrajectoryGroup[] }, ctx: z.RefinementCtx): void {
  const count = metricNamesOf(body.trajectory_groups).size;
  if (count > MAX_METRIC_NAMES)
    ctx.addIssue({
      code: 'custom',
      path: ['trajectory_groups'],
      message: `the trajectories name ${count} distinct metrics (built-ins included); at most ${MAX_METRIC_NAMES} per split and step`,
    });
}

/** Free text: ART sends "train" and "val", anything else is allowed; only an empty split is a 422 (docs/contract.md §2.5). */
const splitSchema = z.string().refine((value) => value.trim() !== '', 'split must not be empty');

export const logBodySchema = z
  .object({
    split: splitSchema,
    trajectory_groups: z.array(trajectoryGroupSchema),
  })
  .superRefine(checkMetricNameCount);

export const createRlJobBodySchema = z
  .object({
    model_id: idSchema,
    trajectory_groups: z.array(trajectoryGroupSchema),
    experimental_config: rlExperimentalConfigSchema.nullish(),
    eval: autoEvalBodySchema
      .nullish()
      .describe("Extension: evaluate every new checkpoint of the model on this eval set (sets the model's auto-eval)"),
  })
  .superRefine(checkMetricNameCount);
