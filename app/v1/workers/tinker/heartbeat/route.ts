import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { heartbeat } from '@/lib/services/tinker/worker-queue';
import { idSchema } from '@/lib/schemas/common';
import { tinkerHeartbeatBodySchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/tinker/heartbeat', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        'A worker busy with a long Tinker request says it is alive (its training clients would fail after a lease without a poll); answers the training clients to free',
      body: tinkerHeartbeatBodySchema,
      response: z.object({ drop: z.array(idSchema) }),
    },
    async ({ body }) => heartbeat({ workerId: body.worker_id, held: body.held, info: body.info }),
  ),
});
