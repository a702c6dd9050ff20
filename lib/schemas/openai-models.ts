import { z } from 'zod';
import { hubDownloadSchema } from './base-models';

/**
 * OpenAI's model list: what `client.models.list()` reads. The optional fields are extensions (vLLM's own
 * `max_model_len` and `parent`, and Tuneboard's routing: who trains and serves the model, and whether it can be
 * served now); clients that do not know them ignore them.
 */
export const openAiModelSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.int(),
  owned_by: z.string(),
  /** A trained model: the base model it was trained from (vLLM names an adapter's base the same way). */
  parent: z.string().optional(),
  /** Context length in tokens, when known. */
  max_model_len: z.int().nullable().optional(),
  /** Parameter count of the base model, when known. */
  parameters: z.int().nullable().optional(),
  /** Who trains it: the built-in runner, the Python worker, or nobody (served only). */
  trained_by: z.enum(['builtin', 'python-worker']).nullable().optional(),
  /** Who serves it: the built-in engine or a vLLM server. */
  served_by: z.enum(['builtin', 'vllm']).nullable().optional(),
  /** Whether its serving engine can answer now; chat answers 503 with `unavailable_reason` when not. */
  available: z.boolean().optional(),
  unavailable_reason: z.string().nullable().optional(),
  /** A base model the server fetches from the Hugging Face Hub: the fetch's progress or error. */
  download: hubDownloadSchema.optional(),
});
export const openAiModelListSchema = z.object({ object: z.literal('list'), data: z.array(openAiModelSchema) });
