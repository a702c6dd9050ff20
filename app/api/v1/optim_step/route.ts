import { methods, route } from '@/lib/api/route';
import { optimStepRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { submit } from '@/lib/services/tinker/training';
import { idempotencyKey } from '@/lib/api/tinker-headers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/optim_step', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Apply the training client's accumulated gradients with AdamW (decoupled weight decay; grad_clip_norm 0 = off) and clear them (docs/tinker.md §2.5)",
      body: optimStepRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) =>
      submit(principal, {
        kind: 'optim_step',
        modelId: body.model_id,
        seqId: body.seq_id ?? null,
        idempotencyKey: idempotencyKey(req),
        payload: { adam_params: body.adam_params },
      }),
  ),
});
