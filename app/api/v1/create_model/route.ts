import { methods, route } from '@/lib/api/route';
import { createModelRequestSchema, untypedApiFutureSchema } from '@/lib/schemas/tinker';
import { createTrainingClient } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/create_model', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Create a LoRA training client (a model of the session's project) on a base model a Python worker trains; answers a future that resolves once a worker holds it",
      body: createModelRequestSchema,
      response: untypedApiFutureSchema,
    },
    async ({ principal, body }) => createTrainingClient(principal, body),
  ),
});
