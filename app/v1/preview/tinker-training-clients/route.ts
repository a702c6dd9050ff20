import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { tinkerTrainingClientListSchema } from '@/lib/schemas/tinker-clients';
import { listTrainingClients } from '@/lib/services/tinker/dashboard';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/tinker-training-clients', {
  GET: route(
    {
      summary:
        'Tinker training clients (docs/tinker.md) of your entities, live ones first: status, worker, LoRA, steps, open requests, errors',
      tag: 'tinker',
      extension: true,
      query: z.object({
        entity: z.string().min(1).max(100).optional().describe('Only this entity; every entity of yours when absent'),
        live: z
          .enum(['true', 'false'])
          .optional()
          .transform((v) => v === 'true')
          .describe('Only training clients that are waiting for a worker or held by one'),
        limit: z.coerce.number().int().min(1).max(200).default(50),
      }),
      response: tinkerTrainingClientListSchema,
    },
    async ({ principal, query }) => listTrainingClients(principal, query),
  ),
});
