import { methods, route } from '@/lib/api/route';
import { appendEvents, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { appendEventsBodySchema, workerJobParamsSchema, appendEventsResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/events', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'Append training_started / gradient_step events (order enforced; with seq, resending is safe)',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      body: appendEventsBodySchema,
      response: appendEventsResponseSchema,
    },
    ({ params, body }) => appendEvents(params.training_job_id, body.worker_id, body.events, body.seq),
  ),
});
