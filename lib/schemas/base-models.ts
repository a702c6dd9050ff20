import { z } from 'zod';

/**
 * A base model named by its Hugging Face Hub id and served by the built-in engine is fetched by the server into the
 * Hugging Face cache: how far that got (bytes so far and in all, when the Hub says), or why it failed.
 */
export const hubDownloadSchema = z.object({
  status: z.enum(['downloading', 'ready', 'failed']),
  done_bytes: z.int().nullable(),
  total_bytes: z.int().nullable(),
  error: z.string().nullable(),
});

export const baseModelSchema = z.object({
  id: z.string(),
  /** Who trains it, as written in the base-models file: builtin, hf (a Python worker) or upstream (nobody). */
  backend: z.enum(['builtin', 'hf', 'upstream']),
  description: z.string().nullable(),
  trained_by: z.enum(['builtin', 'python-worker']).nullable(),
  served_by: z.enum(['builtin', 'vllm']),
  parameters: z.int().nullable(),
  context_length: z.int().nullable(),
  /** Whether its serving engine can answer now; `unavailable_reason` says why not. */
  available: z.boolean(),
  unavailable_reason: z.string().nullable(),
  /** Null unless the server fetches the model from the Hub (an `hf` entry without `path`). */
  download: hubDownloadSchema.nullable(),
});
export const baseModelListSchema = z.object({ object: z.literal('list'), data: z.array(baseModelSchema) });
