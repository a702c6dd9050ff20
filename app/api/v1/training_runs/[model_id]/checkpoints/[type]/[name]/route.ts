import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { deleteSaved } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/training_runs/[model_id]/checkpoints/[type]/[name]', {
  DELETE: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Delete saved weights (weights/<name> or sampler_weights/<name>; sampler weights take their checkpoint of the model with them); team owners and admins only',
      params: z.object({
        model_id: z.string().min(1).max(256),
        type: z.string().min(1).max(32),
        name: z.string().min(1).max(256),
      }),
      notFound: 'Saved weights not found',
      status: 204,
    },
    async ({ principal, params }) => {
      await deleteSaved(principal, params.model_id, params.type, params.name);
      return new Response(null, { status: 204 });
    },
  ),
});
