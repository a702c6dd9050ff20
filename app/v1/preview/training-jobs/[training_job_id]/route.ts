import { methods, route } from '@/lib/api/route';
import { jobIdParamsSchema, trainingJobSchema } from '@/lib/schemas/training-jobs';
import { getJob, JOB_NOT_FOUND } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-jobs/[training_job_id]', {
  GET: route(
    {
      summary: 'Get a training job with its status',
      tag: 'training-jobs',
      params: jobIdParamsSchema,
      notFound: JOB_NOT_FOUND,
      response: trainingJobSchema,
    },
    ({ principal, params }) => getJob(principal, params.training_job_id),
  ),
});
