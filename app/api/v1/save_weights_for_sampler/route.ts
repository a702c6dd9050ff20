import { methods, route } from '@/lib/api/route';
import { saveWeightsForSamplerRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { requireTrainingClient, submit } from '@/lib/services/tinker/training';
import { idempotencyKey } from '@/lib/api/tinker-headers';
import { savePayload } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/save_weights_for_sampler', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Save a training client's LoRA adapter for sampling: a checkpoint of its model (served by chat, the playground and asample), tinker://<model_id>/sampler_weights/<name>; unnamed, a sampling session on it",
      body: saveWeightsForSamplerRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) => {
      const client = await requireTrainingClient(principal, body.model_id);
      const payload = await savePayload(client, {
        kind: 'sampler',
        name: body.path ?? null,
        ttlSeconds: body.ttl_seconds ?? null,
        overwrite: true,
        samplingSessionSeqId: body.sampling_session_seq_id ?? null,
      });
      return submit(principal, {
        kind: 'save_weights_for_sampler',
        modelId: body.model_id,
        seqId: body.seq_id ?? null,
        idempotencyKey: idempotencyKey(req),
        payload,
      });
    },
  ),
});
