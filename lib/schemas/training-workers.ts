import { z } from 'zod';
import { idSchema } from './common';

/**
 * The worker registry as the dashboard reads it (GET /v1/preview/training-workers). Apart from the worker protocol's
 * schemas (workers.ts), which the browser never needs: each page's first-load script budget counts every byte.
 */

export const trainingBackendSchema = z.enum(['builtin', 'hf']);

export const trainingWorkerSchema = z.object({
  id: z.string(),
  backends: z.array(trainingBackendSchema),
  base_models: z.array(z.string()).nullable(),
  kinds: z.array(z.enum(['rl', 'sft', 'tinker'])),
  info: z.record(z.string(), z.unknown()),
  status: z.enum(['busy', 'idle']),
  training_clients: z
    .array(
      z.object({
        model_id: idSchema.nullable().describe("The training client's model, when the caller can see it"),
        model_name: z.string().nullable().describe("That model's name, when the caller can see it"),
        base_model: z.string(),
      }),
    )
    .describe('The Tinker training clients this worker holds in memory (docs/tinker.md §3)'),
  current_job_id: idSchema.nullable().describe('The job it runs, when that job is visible to the caller'),
  current_base_model: z.string().nullable(),
  first_seen_at: z.string(),
  last_seen_at: z.string(),
});
export type TrainingWorkerDto = z.infer<typeof trainingWorkerSchema>;
export const trainingWorkerListSchema = z.object({ data: z.array(trainingWorkerSchema) });
