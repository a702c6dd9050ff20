import { methods, route } from '@/lib/api/route';
import { ApiError } from '@/lib/errors';
import { loadWeightsRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { requireTrainingClient, submit } from '@/lib/services/tinker/training';
import { idempotencyKey } from '@/lib/api/tinker-headers';
import { loadPayload } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/load_weights', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Load saved weights (and with optimizer, the AdamW state) into a training client with the same LoRA settings (load_state, load_state_with_optimizer)',
      body: loadWeightsRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ req, principal, body }) => {
      if (!body.model_id) {
        // Creating the training client from the weights in the same call: this server answers
        // create_model_via_load_weights false, so the SDK creates it first (create_model, then this).
        throw new ApiError(
          'bad_request',
          'load_weights with session_id (create-via-load) is not supported by this server: create the training client with create_model first, as the SDK does when client/config says create_model_via_load_weights is false',
        );
      }
      const client = await requireTrainingClient(principal, body.model_id);
      return submit(principal, {
        kind: 'load_weights',
        modelId: client.modelId,
        seqId: body.seq_id ?? null,
        idempotencyKey: idempotencyKey(req),
        payload: await loadPayload(principal, client, body.path, body.optimizer),
      });
    },
  ),
});
