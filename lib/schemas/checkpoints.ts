import { z } from 'zod';
import { idSchema, jsonInt, limitQuery, listEnvelope, metricsSchema, timestampSchema } from './common';

export const checkpointSchema = z.object({
  id: idSchema,
  step: z.int(),
  metrics: metricsSchema,
  created_at: timestampSchema.optional(),
});
export type CheckpointDto = z.infer<typeof checkpointSchema>;

export const checkpointListSchema = listEnvelope(checkpointSchema);

export const listCheckpointsQuerySchema = z.object({
  after: z.string().optional().describe('ID of the last checkpoint of the previous page'),
  limit: limitQuery,
  order: z.enum(['asc', 'desc']).optional().default('asc').describe('Order by step'),
});

export const deleteCheckpointsBodySchema = z.object({
  steps: z.array(jsonInt()).describe('Steps to delete'),
});

export const deleteCheckpointsResponseSchema = z.object({
  deleted_count: z.int(),
  not_found_steps: z.array(z.int()),
});
