import { methods, route } from '@/lib/api/route';
import { claimJob } from '@/lib/jobs/server/queue';
import { claimBodySchema, claimResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/claim', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        'Claim the next runnable job this worker can train (its capabilities; per-model FIFO); job is null when there is none',
      body: claimBodySchema,
      response: claimResponseSchema,
    },
    async ({ body }) => ({
      job: await claimJob(body.worker_id, body.kinds, body.model_ids, body.capabilities, body.info),
    }),
  ),
});
