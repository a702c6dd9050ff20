import { z } from 'zod';

/** OpenAI's model list: what `client.models.list()` reads. */
export const openAiModelSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.int(),
  owned_by: z.string(),
});
export const openAiModelListSchema = z.object({ object: z.literal('list'), data: z.array(openAiModelSchema) });
