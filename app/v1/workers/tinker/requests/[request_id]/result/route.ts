import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { answer } from '@/lib/services/tinker/worker-queue';
import { tinkerAnswerBodySchema, tinkerRequestParamsSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/tinker/requests/[request_id]/result', {
  POST: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        "A Tinker request's answer: its result or its error (category user or server); a resend is harmless, 409 when the request is no longer this worker's",
      params: tinkerRequestParamsSchema,
      notFound: 'Tinker request not found',
      // A forward_backward result carries a float per token of the batch.
      bodyLimit: 'large',
      body: tinkerAnswerBodySchema,
      response: z.object({ ok: z.literal(true) }),
    },
    async ({ params, body }) =>
      answer(body.worker_id, params.request_id, 'error' in body ? { error: body.error } : { result: body.result }),
  ),
});
