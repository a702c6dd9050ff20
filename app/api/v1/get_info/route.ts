import { methods, route } from '@/lib/api/route';
import { getInfoRequestSchema, getInfoResponseSchema } from '@/lib/schemas/tinker';
import { getInfo } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/get_info', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "A training client's base model, LoRA rank and tokenizer (the model directory where the base-models file gives one)",
      body: getInfoRequestSchema,
      response: getInfoResponseSchema,
    },
    async ({ principal, body }) => getInfo(principal, body.model_id),
  ),
});
