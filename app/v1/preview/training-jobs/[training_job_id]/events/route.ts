import { methods, route } from '@/lib/api/route';
import { jobEventListSchema, jobIdParamsSchema, listEventsQuerySchema } from '@/lib/schemas/training-jobs';
import { JOB_NOT_FOUND, listEventsJson } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-jobs/[training_job_id]/events', {
  GET: route(
    {
      summary: 'Events of a training job, chronological, cursor-paged',
      tag: 'training-jobs',
      params: jobIdParamsSchema,
      notFound: JOB_NOT_FOUND,
      query: listEventsQuerySchema,
      response: jobEventListSchema,
    },
    ({ principal, params, query }) => listEventsJson(principal, params.training_job_id, query),
  ),
});
