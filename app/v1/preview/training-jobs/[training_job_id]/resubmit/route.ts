import { methods, route } from '@/lib/api/route';
import { jobIdParamsSchema, trainingJobSchema } from '@/lib/schemas/training-jobs';
import { JOB_NOT_FOUND, resubmitTrainingJob } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-jobs/[training_job_id]/resubmit', {
  POST: route(
    {
      summary:
        'Run a failed or cancelled job again as a new queued job with the same data and settings; 409 for any other status',
      tag: 'training-jobs',
      extension: true,
      status: 201,
      params: jobIdParamsSchema,
      notFound: JOB_NOT_FOUND,
      response: trainingJobSchema,
    },
    ({ principal, params }) => resubmitTrainingJob(principal, params.training_job_id),
  ),
});
