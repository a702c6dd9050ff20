import { z } from 'zod';

/*
 * Its own module: only the SFT form and the route read it, and the job schemas are in the model page's first load.
 */
/** Extension: GET /v1/preview/sft-training-jobs/timing?base_model=… (the SFT form's time estimate). */
export const sftTimingQuerySchema = z.object({
  base_model: z.string().min(1).max(300).describe('The base model whose past SFT jobs are measured'),
});

const sftPaceSchema = z.object({
  jobs: z.int().describe('Completed SFT jobs measured'),
  seconds_per_step: z.number().describe('Median time between gradient steps'),
  overhead_seconds: z
    .number()
    .describe('Median time of a job outside its steps (loading the model, the first step, saving the checkpoint)'),
});

export const sftTimingSchema = z.object({
  base_model: z.string(),
  /** The worker of the latest measured job first: the one most likely to take the next. */
  workers: z.array(sftPaceSchema.extend({ worker_id: z.string().nullable() })),
});
export type SftTimingDto = z.infer<typeof sftTimingSchema>;
