import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { checkpointsListResponseSchema } from '@/lib/schemas/tinker';
import { listCheckpoints } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/training_runs/[model_id]/checkpoints', {
  GET: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary: "A training run's saved weights, training states and sampler weights, newest first",
      params: z.object({ model_id: z.string().min(1).max(256) }),
      notFound: 'Training client not found',
      response: checkpointsListResponseSchema,
    },
    async ({ principal, params }) => listCheckpoints(principal, params.model_id),
  ),
});
