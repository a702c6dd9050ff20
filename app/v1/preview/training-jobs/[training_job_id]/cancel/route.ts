import { methods, route } from '@/lib/api/route';
import { jobIdParamsSchema, trainingJobSchema } from '@/lib/schemas/training-jobs';
import { cancelTrainingJob, JOB_NOT_FOUND } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-jobs/[training_job_id]/cancel', {
  POST: route(
    {
      summary: 'Cancel a queued or running job: it ends with training_failed "cancelled"; finished jobs are unchanged',
      tag: 'training-jobs',
      extension: true,
      params: jobIdParamsSchema,
      notFound: JOB_NOT_FOUND,
      response: trainingJobSchema,
    },
    ({ principal, params }) => cancelTrainingJob(principal, params.training_job_id),
  ),
});
