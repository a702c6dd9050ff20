import { z } from 'zod';

export const healthSchema = z.object({ status: z.literal('ok') });

export const queueCheckSchema = z.object({
  success: z.boolean(),
  duration: z.number().describe('Seconds'),
  error: z.string().nullable(),
});

export const systemCheckSchema = z.object({
  api: z.boolean(),
  database: z.boolean(),
  cpu_queue: queueCheckSchema,
  gpu_queue: queueCheckSchema,
});
