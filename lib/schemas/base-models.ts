import { z } from 'zod';

export const baseModelSchema = z.object({
  id: z.string(),
  backend: z.enum(['builtin', 'hf', 'upstream']),
  description: z.string().nullable(),
});
export const baseModelListSchema = z.object({ object: z.literal('list'), data: z.array(baseModelSchema) });
