import { methods, route } from '@/lib/api/route';
import { unloadModelRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { submit } from '@/lib/services/tinker/training';
import { idempotencyKey } from '@/lib/api/tinker-headers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/unload_model', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Close a training client: its worker frees the memory after every earlier request has run; its model and saved weights stay',
      body: unloadModelRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) =>
      submit(principal, {
        kind: 'unload_model',
        modelId: body.model_id,
        seqId: null,
        idempotencyKey: idempotencyKey(req),
        payload: {},
      }),
  ),
});
