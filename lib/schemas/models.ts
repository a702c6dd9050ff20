import { z } from 'zod';
import { idSchema, limitQuery, listEnvelope, nameSegmentSchema, timestampSchema } from './common';

export const createModelBodySchema = z.object({
  entity: nameSegmentSchema.nullish().describe("Team or user; null means the key owner's personal entity"),
  project: nameSegmentSchema,
  name: nameSegmentSchema,
  base_model: z.string().min(1).max(256),
  return_existing: z.boolean().nullish().describe('Return the stored model instead of a 409 when the name exists'),
});
export type CreateModelBody = z.infer<typeof createModelBodySchema>;

/**
 * The dashboard names new projects like users and teams: lower-case slugs. The API keeps accepting any name
 * segment, because clients (ART) pick project names in code and existing projects must keep working.
 */
export const NEW_PROJECT_NAME = /^[a-z0-9][a-z0-9._-]*$/;
export const NEW_PROJECT_NAME_HINT = 'use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit';

/** The model record of the interface (docs/contract.md §2.1). */
export const modelSchema = z.object({
  id: idSchema,
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  base_model: z.string(),
  run_id: z.string().nullable(),
});
export type ModelDto = z.infer<typeof modelSchema>;

export const metricDirectionSchema = z.enum(['max', 'min']);

export const bestMetricSchema = z
  .object({
    name: z.string(),
    value: z.number(),
    step: z.int().describe('The checkpoint that holds the value (the later step on a tie)'),
    direction: metricDirectionSchema.describe('max: higher is better; min: lower is better'),
  })
  .describe('The best value of one metric across the existing checkpoints');
export type BestMetricDto = z.infer<typeof bestMetricSchema>;

/** Dashboard extension: the record plus what a list or detail page shows. */
export const modelSummarySchema = modelSchema.extend({
  created_at: timestampSchema,
  latest_step: z.int().nullable().describe('Highest existing checkpoint step, null when none remain'),
  checkpoint_count: z.int(),
  best_metric: bestMetricSchema
    .nullable()
    .describe('By `metric` when the list asks for one, else val/reward, else val/loss; null when no checkpoint has it'),
});
export type ModelSummaryDto = z.infer<typeof modelSummarySchema>;

export const modelListSchema = listEnvelope(modelSummarySchema);

export const listModelsQuerySchema = z.object({
  entity: z.string().optional().describe('Entity name; all accessible entities when absent'),
  project: z.string().optional(),
  base_model: z.string().optional(),
  search: z.string().max(200).optional().describe('Case-insensitive substring of the model name'),
  metric: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Checkpoint metric for best_metric (e.g. val/accuracy); default val/reward, else val/loss'),
  metric_direction: metricDirectionSchema
    .optional()
    .describe('Whether higher (max) or lower (min) is better; guessed from the name when absent (…loss → min)'),
  after: z.string().optional().describe('ID of the last model of the previous page'),
  limit: limitQuery,
});

export const deleteModelResponseSchema = z.object({
  model_id: idSchema,
  deleted_checkpoints: z.int(),
  deleted_run: z.boolean(),
});

export const modelIdParamsSchema = z.object({ model_id: idSchema });

export const projectSchema = z.object({
  id: idSchema,
  entity: z.string(),
  name: z.string(),
  created_at: timestampSchema,
  model_count: z.int(),
});
export const projectListSchema = z.object({ object: z.literal('list'), data: z.array(projectSchema) });
