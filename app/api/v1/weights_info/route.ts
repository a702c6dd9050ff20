import { methods, route } from '@/lib/api/route';
import { weightsInfoRequestSchema, weightsInfoResponseSchema } from '@/lib/schemas/tinker';
import { weightsInfo } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/weights_info', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'The base model and LoRA settings of saved weights, by tinker:// path (create_training_client_from_state reads them)',
      body: weightsInfoRequestSchema,
      response: weightsInfoResponseSchema,
    },
    async ({ principal, body }) => weightsInfo(principal, body.tinker_path),
  ),
});
