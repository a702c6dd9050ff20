import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { idSchema } from '@/lib/schemas/common';
import { modelTinkerSchema } from '@/lib/schemas/tinker-clients';
import { modelTinker } from '@/lib/services/tinker/dashboard';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models/[model_id]/tinker', {
  GET: route(
    {
      summary:
        "A Tinker training client's state (the model's): its worker, its latest requests with their errors, its saved weights",
      tag: 'tinker',
      extension: true,
      params: z.object({ model_id: idSchema }),
      notFound: 'This model is not a Tinker training client',
      response: modelTinkerSchema,
    },
    async ({ principal, params }) => modelTinker(principal, params.model_id),
  ),
});
