import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { checkpointsListResponseSchema } from '@/lib/schemas/tinker';
import { listUserCheckpoints } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/checkpoints', {
  GET: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary: 'Saved weights of every training run of your entities, newest first',
      query: z.object({
        limit: z.coerce.number().int().min(1).max(1000).default(20),
        offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      }),
      response: checkpointsListResponseSchema,
    },
    async ({ principal, query }) => listUserCheckpoints(principal, query),
  ),
});
