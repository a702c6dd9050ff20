import { queryOptions } from '@tanstack/react-query';
import { sftTimingSchema, type SftTimingDto } from '@/lib/schemas/sft-timing';
import { apiFetch } from '../api/api-fetch';

/** How fast a base model's SFT jobs ran, per worker (the SFT form only: apart from lib/client/queries, which most pages load). */
export const sftTimingQuery = (baseModel: string) =>
  queryOptions({
    queryKey: ['sft-timing', baseModel] as const,
    queryFn: ({ signal }) =>
      apiFetch(`/v1/preview/sft-training-jobs/timing?base_model=${encodeURIComponent(baseModel)}`, sftTimingSchema, {
        signal,
      }),
  });

/**
 * The SFT form's time estimate for `steps` gradient steps, from the base model's measured pace on the worker that
 * trained its latest job (GET /v1/preview/sft-training-jobs/timing): its overhead (loading, saving) plus its time
 * per step. Null when no job on that base model has been measured: then no number is better than a made-up one
 * (issue 41: a fixed 28 ms a step said "about 1 s" for a job of 17.9 s).
 */
export function sftEstimate(
  timing: SftTimingDto | undefined,
  steps: number,
): { seconds: number; workerId: string | null; jobs: number } | null {
  const pace = timing?.workers[0];
  if (!pace) return null;
  return {
    seconds: pace.overhead_seconds + steps * pace.seconds_per_step,
    workerId: pace.worker_id,
    jobs: pace.jobs,
  };
}
