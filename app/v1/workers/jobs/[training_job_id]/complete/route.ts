import { methods, route } from '@/lib/api/route';
import { completeJob, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { completeBodySchema, workerJobParamsSchema, completeResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/complete', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'Commit the new checkpoint (step = highest ever + 1), then emit training_ended',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      body: completeBodySchema,
      response: completeResponseSchema,
    },
    ({ params, body }) =>
      completeJob(params.training_job_id, body.worker_id, { artifactKey: body.artifact_key, metrics: body.metrics }),
  ),
});
