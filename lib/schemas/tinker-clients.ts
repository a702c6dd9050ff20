import { z } from 'zod';
import { idSchema } from './common';

/**
 * The dashboard's view of Tinker training clients (docs/tinker.md): extensions under /v1/preview, read by the
 * Jobs, Workers and model pages. The Tinker SDK's own wire is lib/schemas/tinker.ts.
 */

export const tinkerClientStatusSchema = z.enum(['waiting', 'ready', 'closed', 'failed']);

export const tinkerTrainingClientSchema = z.object({
  model_id: idSchema,
  entity: z.string(),
  project: z.string(),
  model_name: z.string(),
  base_model: z.string(),
  status: tinkerClientStatusSchema.describe(
    'waiting: for a worker to load it; ready: held by a worker; closed: unloaded or its session ended; failed',
  ),
  worker_id: z
    .string()
    .nullable()
    .describe('The worker that holds it (ready), or that is loading it (waiting, once a worker took its create_model)'),
  waiting_reason: z
    .string()
    .nullable()
    .describe('waiting, with no worker yet: why (no connected worker can train its base model, or none has room)'),
  lora: z.object({
    rank: z.int(),
    alpha: z.number(),
    train_mlp: z.boolean(),
    train_attn: z.boolean(),
    train_unembed: z.boolean(),
  }),
  optim_steps: z.int(),
  queued_requests: z.int(),
  running_requests: z.int(),
  error: z.string().nullable(),
  error_category: z.string().nullable(),
  sdk_version: z.string().nullable(),
  created_at: z.string(),
  last_request_at: z.string(),
  ended_at: z.string().nullable(),
});
export type TinkerTrainingClientDto = z.infer<typeof tinkerTrainingClientSchema>;

export const tinkerTrainingClientListSchema = z.object({ data: z.array(tinkerTrainingClientSchema) });

export const tinkerRequestSummarySchema = z.object({
  id: idSchema,
  kind: z.string(),
  seq_id: z.int().nullable(),
  status: z.enum(['queued', 'running', 'done', 'failed']),
  error: z.string().nullable(),
  error_category: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type TinkerRequestSummaryDto = z.infer<typeof tinkerRequestSummarySchema>;

export const tinkerSavedWeightsSchema = z.object({
  kind: z.enum(['training', 'sampler']),
  name: z.string(),
  tinker_path: z.string(),
  step: z.int().nullable().describe('The checkpoint step of sampler weights'),
  size_bytes: z.int(),
  ephemeral: z.boolean(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
});
export type TinkerSavedWeightsDto = z.infer<typeof tinkerSavedWeightsSchema>;

export const modelTinkerSchema = z.object({
  training_client: tinkerTrainingClientSchema,
  requests: z.array(tinkerRequestSummarySchema),
  saved: z.array(tinkerSavedWeightsSchema),
});
export type ModelTinkerDto = z.infer<typeof modelTinkerSchema>;
