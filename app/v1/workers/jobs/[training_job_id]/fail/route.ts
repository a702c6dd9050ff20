import { methods, route } from '@/lib/api/route';
import { failJob, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { failBodySchema, workerJobParamsSchema, failResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/fail', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'End the job with training_failed and the given message',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      body: failBodySchema,
      response: failResponseSchema,
    },
    async ({ params, body }) => {
      await failJob(params.training_job_id, body.worker_id, body.error_message);
      return { failed: true as const };
    },
  ),
});
