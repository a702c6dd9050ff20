import { z } from 'zod';
import { queryInt } from './common';
import { historySchema } from './trajectories';

/** Run comparison draws two to eight models: more lines than that on one chart are no longer told apart. */
export const COMPARE_MIN_MODELS = 2;
export const COMPARE_MAX_MODELS = 8;

export const compareQuerySchema = z.object({
  model_ids: z
    .string()
    .max(2000)
    .optional()
    .describe(`Comma-separated model ids, ${COMPARE_MIN_MODELS} to ${COMPARE_MAX_MODELS}, in the order to draw them`),
  project: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe(`A project's name instead of model_ids: its ${COMPARE_MAX_MODELS} newest models`),
  entity: z.string().max(128).optional().describe('With project: the team or user that owns it (default: all yours)'),
});
export type CompareQuery = z.infer<typeof compareQuerySchema>;

/** A configuration value as the run table shows it: scalars as they are, lists and objects as compact JSON. */
export const configValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const compareMetricSchema = z.object({
  name: z.string().describe('A key of the model’s training curve (history axis=gradient_step)'),
  final: z.number().describe('Its value at the last gradient step that logged it'),
  best: z.number().describe('Its lowest (direction min) or highest (max) value over the whole curve'),
  direction: z.enum(['min', 'max']).describe('Guessed from the name: loss-like metrics improve downward'),
});

export const compareRunSchema = z.object({
  model_id: z.string(),
  name: z.string(),
  entity: z.string(),
  project: z.string(),
  base_model: z.string(),
  status: z
    .enum(['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'])
    .nullable()
    .describe('The status of the model’s latest job; null: it has none'),
  jobs: z.int().describe('How many training jobs the model has had'),
  gradient_steps: z.int().describe('Points on the model’s training curve'),
  started_at: z.string().nullable().describe('When its first job started'),
  finished_at: z.string().nullable().describe('When its latest job finished (null while one runs)'),
  duration_s: z
    .number()
    .nullable()
    .describe('Seconds its jobs ran, summed (a running job counts until now); null: none started'),
  config: z
    .record(z.string(), configValueSchema)
    .describe('The latest job’s configuration, flattened (lora.rank → lora_rank), with base_model and kind'),
  metrics: z.array(compareMetricSchema),
});
export type CompareRun = z.infer<typeof compareRunSchema>;

export const comparisonSchema = z.object({
  object: z.literal('comparison'),
  runs: z.array(compareRunSchema),
  omitted: z.int().describe('project: how many older models of the project were left out'),
});
export type Comparison = z.infer<typeof comparisonSchema>;

/** Points per run the comparison's charts ask for: half-width charts of up to eight runs each. */
export const COMPARE_CURVE_POINTS = 250;

export const compareCurvesQuerySchema = z.object({
  model_ids: z
    .string()
    .max(2000)
    .describe(`Comma-separated model ids, ${COMPARE_MIN_MODELS} to ${COMPARE_MAX_MODELS}, in the order to draw them`),
  max_points: queryInt()
    .pipe(z.int().min(10).max(2000))
    .optional()
    .default(COMPARE_CURVE_POINTS)
    .describe('Points per series of each run (each bucket keeps its lowest and highest point)'),
});
export type CompareCurvesQuery = z.infer<typeof compareCurvesQuerySchema>;

export const compareCurvesSchema = z.object({
  object: z.literal('comparison.curves'),
  runs: z
    .array(historySchema.extend({ model_id: z.string() }))
    .describe('Each model’s training curve (its history with axis=gradient_step), in the order given'),
});
export type CompareCurves = z.infer<typeof compareCurvesSchema>;
