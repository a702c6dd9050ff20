import { methods, route } from '@/lib/api/route';
import { createRlJobBodySchema, jobCreatedSchema } from '@/lib/schemas/training-jobs';
import { createRlJob } from '@/lib/services/training-jobs';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
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
