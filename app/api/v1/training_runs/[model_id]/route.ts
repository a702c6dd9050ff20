import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { trainingRunSchema } from '@/lib/schemas/tinker';
import { trainingRun } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/training_runs/[model_id]', {
  GET: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary: 'A training run: base model, LoRA rank, last request, last saved state and sampler weights',
      params: z.object({ model_id: z.string().min(1).max(256) }),
      notFound: 'Training client not found',
      query: z.object({ access_scope: z.string().max(32).optional() }),
      response: trainingRunSchema,
    },
    async ({ principal, params }) => trainingRun(principal, params.model_id),
  ),
});
