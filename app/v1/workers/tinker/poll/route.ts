import { methods, route } from '@/lib/api/route';
import { poll } from '@/lib/services/tinker/worker-queue';
import { tinkerPollBodySchema, tinkerPollResponseSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/tinker/poll', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        'Tinker training clients (docs/tinker.md §3.2): the next request of each training client this worker holds, a new training client when it has room, and the ones to free; held open up to wait_ms',
      body: tinkerPollBodySchema,
      response: tinkerPollResponseSchema,
    },
    async ({ req, body }) =>
      poll(
        {
          workerId: body.worker_id,
          capabilities: body.capabilities,
          kinds: body.kinds,
          info: body.info,
          held: body.held,
          acceptNew: body.accept_new,
          waitMs: body.wait_ms,
        },
        req.signal,
      ),
  ),
});
