import { z } from 'zod';
import { idSchema, nameSegmentSchema, timestampSchema } from './common';

export const uploadDatasetQuerySchema = z.object({
  entity: nameSegmentSchema.optional().describe("Entity name; the caller's personal entity when absent"),
  project: nameSegmentSchema,
  name: nameSegmentSchema.describe('Dataset name; each upload adds a version'),
  filename: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
    .optional()
    .default('train.jsonl')
    .describe('File name of a raw (non-multipart) body'),
});

export const datasetSchema = z.object({
  id: idSchema,
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  version: z.int(),
  training_data_url: z.string(),
  files: z.array(z.object({ name: z.string(), size: z.int() })),
  num_examples: z.int().nullable(),
  created_at: timestampSchema,
});
export type DatasetDto = z.infer<typeof datasetSchema>;

export const datasetListSchema = z.object({ object: z.literal('list'), data: z.array(datasetSchema) });
