import { methods, route } from '@/lib/api/route';
import { createSftJobWithEvalBodySchema } from '@/lib/schemas/evals';
import { jobCreatedSchema } from '@/lib/schemas/training-jobs';
import { createSftJob } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/sft-training-jobs', {
  POST: route(
    {
      summary: 'Create an SFT training job from an uploaded dataset',
      tag: 'training-jobs',
      body: createSftJobWithEvalBodySchema,
      response: jobCreatedSchema,
    },
    ({ principal, body }) => createSftJob(principal, body),
  ),
});
