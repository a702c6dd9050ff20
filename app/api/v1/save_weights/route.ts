import { methods, route } from '@/lib/api/route';
import { saveWeightsRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { requireTrainingClient, submit } from '@/lib/services/tinker/training';
import { idempotencyKey } from '@/lib/api/tinker-headers';
import { savePayload } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/save_weights', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Save a training client's state (LoRA adapter and AdamW state) as tinker://<model_id>/weights/<name>, to resume from on any worker",
      body: saveWeightsRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) => {
      const client = await requireTrainingClient(principal, body.model_id);
      const payload = await savePayload(client, {
        kind: 'training',
        name: body.path ?? `state-${body.seq_id ?? Date.now()}`,
        ttlSeconds: body.ttl_seconds ?? null,
        overwrite: body.overwrite,
        samplingSessionSeqId: null,
      });
      return submit(principal, {
        kind: 'save_weights',
        modelId: body.model_id,
        seqId: body.seq_id ?? null,
        idempotencyKey: idempotencyKey(req),
        payload,
      });
    },
  ),
});
