import { methods, route } from '@/lib/api/route';
import { entityJobListSchema, jobCreatedSchema, listEntityJobsQuerySchema } from '@/lib/schemas/training-jobs';
import { createRlJobBodySchema } from '@/lib/schemas/trajectory-input';
import { createRlJob, listEntityJobs } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-jobs', {
  GET: route(
    {
      summary: "The caller's training jobs across models, newest first (or only the active ones)",
      tag: 'training-jobs',
      extension: true,
      query: listEntityJobsQuerySchema,
      response: entityJobListSchema,
    },
    ({ principal, query }) => listEntityJobs(principal, query),
  ),
  POST: route(
    {
      summary: 'Create an RL training job from trajectory groups',
      tag: 'training-jobs',
      body: createRlJobBodySchema,
      bodyLimit: 'large',
      // Parsed, checked and stringified for storage on the body thread when large (lib/body/prepared.ts); NUL is
      // allowed under trajectory_groups there.
      offload: 'rl-job',
      response: jobCreatedSchema,
    },
    ({ principal, prepared }) => createRlJob(principal, prepared),
  ),
});
