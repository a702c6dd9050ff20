import { z } from 'zod';

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
});
export const baseModelListSchema = z.object({ object: z.literal('list'), data: z.array(baseModelSchema) });
