import { z } from 'zod';

/**
 * A base model named by its Hugging Face Hub id and served by the built-in engine is fetched by the server into the
 * Hugging Face cache: how far that got (bytes so far and in all, when the Hub says), or why it failed.
 */
/**
 * A Hub download's progress as one phrase, "412 MB of 1.2 GB (34%)": the server's 503 reason and the model page's
 * notice say it the same way.
 */
export function downloadProgressText(done: number | null, total: number | null): string {
  const mb = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : `${Math.round(n / 1e6)} MB`);
  if (!total) return done ? mb(done) : 'starting';
  return `${mb(done ?? 0)} of ${mb(total)} (${Math.floor((100 * (done ?? 0)) / total)}%)`;
}

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
