import { methods, route } from '@/lib/api/route';
import { signOffWorker } from '@/lib/jobs/server/queue';
import { signOffResponseSchema, workerIdBodySchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/sign-off', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        'A worker that stops cleanly leaves the registry at once, so jobs only it could train say at once that no worker is connected',
      body: workerIdBodySchema,
      response: signOffResponseSchema,
    },
    async ({ body }) => signOffWorker(body.worker_id),
  ),
});
