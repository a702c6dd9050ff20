import { methods, route } from '@/lib/api/route';
import { heartbeat, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { heartbeatBodySchema, workerJobParamsSchema, heartbeatResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/heartbeat', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'Extend the lease; cancelled:true tells the worker to stop',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      body: heartbeatBodySchema,
      response: heartbeatResponseSchema,
    },
    ({ params, body }) => heartbeat(params.training_job_id, body.worker_id, body.info),
  ),
});
