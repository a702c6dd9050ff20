import { z } from 'zod';
import { queryInt } from './common';

export const usageQuerySchema = z.object({
  entity: z.string().optional(),
  days: queryInt().pipe(z.int().min(1).max(366)).optional().default(30).describe('How many days back, today included'),
});

export const usageRowSchema = z.object({
  entity: z.string(),
  project: z.string(),
  model: z.string(),
  day: z.string().describe('UTC day, YYYY-MM-DD'),
  requests: z.int(),
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
});

export const usageListSchema = z.object({ object: z.literal('list'), data: z.array(usageRowSchema) });
