import { methods, route } from '@/lib/api/route';
import { JOB_NOT_FOUND, jobInput } from '@/lib/jobs/server/queue';
import { loadTrainingExamples } from '@/lib/services/datasets';
import { jobInputSchema, workerIdQuerySchema, workerJobParamsSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/input', {
  GET: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'What the job trains on: trajectory groups (RL) or the dataset examples (SFT)',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      query: workerIdQuerySchema,
      response: jobInputSchema,
    },
    ({ params, query }) => jobInput(params.training_job_id, query.worker_id, loadTrainingExamples),
  ),
});
