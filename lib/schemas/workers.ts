import { z } from 'zod';
import { idSchema } from './common';

const workerId = z.string().min(1).max(200).describe('Stable id of the worker process, e.g. gpu-box-1:0');

export const trainingBackendSchema = z.enum(['builtin', 'hf']);

export const workerCapabilitiesSchema = z
  .object({
    backends: z
      .array(trainingBackendSchema)
      .min(1)
      .describe('Which base models this worker trains: builtin (the CPU engine) and/or hf (PyTorch + PEFT)'),
    base_models: z
      .array(z.string().min(1).max(300))
      .max(1000)
      .optional()
      .describe('Only these base model ids; every base model of its backends when absent'),
  })
  .describe('What the worker can train; a worker that sends none trains built-in models only');

/** Free-form facts a worker reports about itself (host, device, versions), shown on the dashboard. */
export const workerInfoSchema = z
  .record(z.string().max(64), z.union([z.string().max(500), z.number(), z.boolean(), z.null()]))
  .refine((r) => Object.keys(r).length <= 32, 'at most 32 info keys');

export const claimBodySchema = z.object({
  worker_id: workerId,
  kinds: z
    .array(z.enum(['rl', 'sft']))
    .min(1)
    .optional()
    .describe('Job kinds this worker can train; both when absent'),
  model_ids: z.array(idSchema).max(1000).optional().describe('Only jobs of these models; all models when absent'),
  capabilities: workerCapabilitiesSchema.optional(),
  info: workerInfoSchema.optional(),
});

export const workerJobSchema = z.object({
  id: idSchema,
  kind: z.enum(['rl', 'sft']),
  model_id: idSchema,
  base_model: z.string(),
  backend: trainingBackendSchema.describe('Who trains it: builtin or hf (the Python worker)'),
  base_model_path: z
    .string()
    .nullable()
    .describe(
      "hf: the directory from the base-models file as written there (relative: to the worker's models directory); null: resolve the id in the Hugging Face cache",
    ),
  config: z.record(z.string(), z.unknown()),
  base_checkpoint: z.object({ step: z.int(), artifact_key: z.string().nullable() }).nullable(),
  attempts: z.int(),
  lease_seconds: z.number(),
});

export const claimResponseSchema = z.object({ job: workerJobSchema.nullable() });

export const workerIdBodySchema = z.object({ worker_id: workerId });
export const heartbeatBodySchema = z.object({ worker_id: workerId, info: workerInfoSchema.optional() });
export const workerIdQuerySchema = z.object({ worker_id: workerId });

export const appendEventsBodySchema = z.object({
  worker_id: workerId,
  events: z
    .array(z.object({ type: z.enum(['training_started', 'gradient_step']), data: z.record(z.string(), z.unknown()) }))
    .max(1000),
  seq: z
    .int()
    .min(0)
    .optional()
    .describe(
      'Position of the first event among all events this worker sent for the job (training_started is 0). With it a resent batch is safe: events already stored are skipped, a gap is a 409',
    ),
});

export const completeBodySchema = z.object({
  worker_id: workerId,
  artifact_key: z.string().min(1),
  metrics: z.record(z.string(), z.number()).optional(),
});

export const failBodySchema = z.object({ worker_id: workerId, error_message: z.string().min(1).max(20_000) });

const sftInputExample = z.object({
  line: z.int(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.string() })),
  tools: z.array(z.unknown()).optional(),
});

export const jobInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rl'), trajectory_groups: z.array(z.record(z.string(), z.unknown())) }),
  z.object({
    kind: z.literal('sft'),
    file: z.string(),
    examples: z.array(sftInputExample),
    // Absent from servers older than validation_split: nothing held out.
    validation: z.array(sftInputExample).default([]),
  }),
]);

export const workerJobParamsSchema = z.object({ training_job_id: idSchema });

/** The files a checkpoint upload may carry: the built-in engine's weights, or a PEFT LoRA adapter's two files. */
export const CHECKPOINT_FILES = ['model.safetensors', 'adapter_model.safetensors', 'adapter_config.json'] as const;
export const checkpointUploadQuerySchema = z.object({
  worker_id: workerId,
  file: z.enum(CHECKPOINT_FILES).default('model.safetensors').describe('Which file of the checkpoint this body is'),
});
export const weightsQuerySchema = z.object({
  worker_id: workerId,
  file: z
    .enum(['adapter_config.json'])
    .optional()
    .describe("A LoRA checkpoint's adapter_config.json instead of its weights"),
});

export const trainingWorkerSchema = z.object({
  id: z.string(),
  backends: z.array(trainingBackendSchema),
  base_models: z.array(z.string()).nullable(),
  kinds: z.array(z.enum(['rl', 'sft'])),
  info: z.record(z.string(), z.unknown()),
  status: z.enum(['busy', 'idle']),
  current_job_id: idSchema.nullable().describe('The job it runs, when that job is visible to the caller'),
  current_base_model: z.string().nullable(),
  first_seen_at: z.string(),
  last_seen_at: z.string(),
});
export type TrainingWorkerDto = z.infer<typeof trainingWorkerSchema>;
export const trainingWorkerListSchema = z.object({ data: z.array(trainingWorkerSchema) });
