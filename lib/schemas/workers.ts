import { z } from 'zod';
import { idSchema } from './common';
import { trainingBackendSchema } from './training-workers';

const workerId = z.string().min(1).max(200).describe('Stable id of the worker process, e.g. gpu-box-1:0');

export { trainingBackendSchema };

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
    .array(z.enum(['rl', 'sft', 'tinker']))
    .min(1)
    .optional()
    .describe(
      'Job kinds this worker can train; rl and sft when absent. `tinker` (Tinker training clients, taken through /v1/workers/tinker/poll) is recorded, never a job kind',
    ),
  model_ids: z.array(idSchema).max(1000).optional().describe('Only jobs of these models; all models when absent'),
  capabilities: workerCapabilitiesSchema.optional(),
  info: workerInfoSchema.optional(),
  wait_seconds: z
    .number()
    .min(0)
    .max(3600)
    .optional()
    .describe(
      'Long poll: when nothing is claimable, hold the answer up to this many seconds (the server caps it at 25) and answer as soon as a job can be claimed. Absent or 0: answer at once',
    ),
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

// ---- What each worker route answers: the server declares them (OpenAPI), the Node worker parses them ----------

export const heartbeatResponseSchema = z.object({ cancelled: z.boolean() });
export const appendEventsResponseSchema = z.object({ appended: z.int() });
export const completeResponseSchema = z.object({ step: z.int() });
export const failResponseSchema = z.object({ failed: z.literal(true) });
export const checkpointUploadResponseSchema = z.object({ artifact_key: z.string() });

export const workerIdBodySchema = z.object({ worker_id: workerId });
export const signOffResponseSchema = z.object({
  signed_off: z
    .boolean()
    .describe(
      'True when the worker left the registry; false when it still holds a job or Tinker training clients (their lease and the Tinker sweeper decide), or was not registered',
    ),
});
export const heartbeatBodySchema = z.object({ worker_id: workerId, info: workerInfoSchema.optional() });
export const workerIdQuerySchema = z.object({ worker_id: workerId });

/** One event a worker reports; the server adds `training_ended` / `training_failed` itself. */
export const workerEventSchema = z.object({
  type: z.enum(['training_started', 'gradient_step']),
  data: z.record(z.string(), z.unknown()),
});

export const appendEventsBodySchema = z.object({
  worker_id: workerId,
  events: z.array(workerEventSchema).max(1000),
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

/** The worker contract's types, derived from the schemas the routes validate with (never written twice). */
export type WorkerJob = z.infer<typeof workerJobSchema>;
export type WorkerEvent = z.infer<typeof workerEventSchema>;
export type JobInput = z.output<typeof jobInputSchema>;

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

// The dashboard's list of workers lives in training-workers.ts: the browser loads it without the worker protocol's
// schemas (every page's script budget; the model page's is spent).
export { trainingWorkerSchema, trainingWorkerListSchema, type TrainingWorkerDto } from './training-workers';

// ---- Tinker training clients (docs/tinker.md §3) ------------------------------------------------------------

const modelIdList = z.array(idSchema).max(1000);

export const tinkerPollBodySchema = z.object({
  worker_id: workerId,
  capabilities: workerCapabilitiesSchema,
  kinds: z
    .array(z.enum(['rl', 'sft', 'tinker']))
    .max(3)
    .optional()
    .describe("The worker's kinds, recorded in the worker registry as its claims record them"),
  info: workerInfoSchema.optional(),
  held: modelIdList.describe('The training clients (model ids) whose state this worker holds now'),
  accept_new: z.boolean().describe('Whether it has room for one more training client'),
  wait_ms: z.int().min(0).max(30_000).default(10_000).describe('How long the server may hold the answer'),
});

/** What a Tinker future is (docs/tinker.md §2.2): every training call, and asample (run by the server itself). */
export const TINKER_REQUEST_KINDS = [
  'create_model',
  'forward',
  'forward_backward',
  'optim_step',
  'save_weights',
  'save_weights_for_sampler',
  'load_weights',
  'unload_model',
  'sample',
] as const;
export type TinkerRequestKind = (typeof TINKER_REQUEST_KINDS)[number];

export const tinkerWorkerRequestSchema = z.object({
  request_id: idSchema,
  model_id: idSchema,
  seq_id: z.int().nullable(),
  kind: z.enum(TINKER_REQUEST_KINDS),
  payload: z.record(z.string(), z.unknown()),
});

export const tinkerPollResponseSchema = z.object({
  requests: z.array(tinkerWorkerRequestSchema),
  drop: modelIdList.describe('Training clients to free'),
  lease_seconds: z
    .number()
    .describe('How long the server waits without a poll or heartbeat before it fails the training clients'),
});

export const tinkerHeartbeatBodySchema = z.object({
  worker_id: workerId,
  held: modelIdList,
  info: workerInfoSchema.optional(),
});

export const tinkerAnswerBodySchema = z.union([
  z.object({ worker_id: workerId, result: z.record(z.string(), z.unknown()) }),
  z.object({
    worker_id: workerId,
    error: z.object({ message: z.string().min(1).max(20_000), category: z.enum(['user', 'server']) }),
  }),
]);

export const tinkerRequestParamsSchema = z.object({ request_id: idSchema });
export const TINKER_FILES = ['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors'] as const;
export const tinkerFileParamsSchema = z.object({ request_id: idSchema, file: z.enum(TINKER_FILES) });
