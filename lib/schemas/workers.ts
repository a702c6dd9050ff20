import { z } from 'zod';
import { idSchema } from './common';

const workerId = z.string().min(1).max(200).describe('Stable id of the worker process, e.g. gpu-box-1:0');

export const claimBodySchema = z.object({
  worker_id: workerId,
  kinds: z.array(z.enum(['rl', 'sft'])).min(1).optional().describe('Job kinds this worker can train; both when absent'),
  model_ids: z.array(idSchema).max(1000).optional().describe('Only jobs of these models; all models when absent'),
});

export const workerJobSchema = z.object({
  id: idSchema,
  kind: z.enum(['rl', 'sft']),
  model_id: idSchema,
  base_model: z.string(),
  config: z.record(z.string(), z.unknown()),
  base_checkpoint: z.object({ step: z.int(), artifact_key: z.string().nullable() }).nullable(),
  attempts: z.int(),
  lease_seconds: z.number(),
});

export const claimResponseSchema = z.object({ job: workerJobSchema.nullable() });

export const workerIdBodySchema = z.object({ worker_id: workerId });
export const workerIdQuerySchema = z.object({ worker_id: workerId });

export const appendEventsBodySchema = z.object({
  worker_id: workerId,
  events: z
    .array(z.object({ type: z.enum(['training_started', 'gradient_step']), data: z.record(z.string(), z.unknown()) }))
    .max(1000),
});

export const completeBodySchema = z.object({
  worker_id: workerId,
  artifact_key: z.string().min(1),
  metrics: z.record(z.string(), z.number()).optional(),
});

export const failBodySchema = z.object({ worker_id: workerId, error_message: z.string().min(1).max(20_000) });

export const jobInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rl'), trajectory_groups: z.array(z.record(z.string(), z.unknown())) }),
  z.object({
    kind: z.literal('sft'),
    file: z.string(),
    examples: z.array(z.object({ line: z.int(), messages: z.array(z.looseObject({ role: z.string(), content: z.string() })), tools: z.array(z.unknown()).optional() })),
  }),
]);

export const workerJobParamsSchema = z.object({ training_job_id: idSchema });
