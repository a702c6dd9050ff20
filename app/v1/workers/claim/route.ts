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
        'Claim the next runnable job this worker can train (its capabilities; per-model FIFO); job is null when there is none. With wait_seconds the answer is held (up to 25 s) until a job can be claimed',
      body: claimBodySchema,
      response: claimResponseSchema,
    },
    async ({ req, body }) => ({
      job: await claimJob(body.worker_id, body.kinds, body.model_ids, body.capabilities, body.info, {
        waitSeconds: body.wait_seconds,
        // The worker went away (or its request timed out): the parked claim stops waiting at once.
        signal: req.signal,
      }),
    }),
  ),
});
