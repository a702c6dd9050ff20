import { methods, route } from '@/lib/api/route';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { baseModelDtos } from '@/lib/services/base-models';

export const dynamic = 'force-dynamic';

/** Extension: the base models of this server, who trains and serves each, and whether it can be served now. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/base-models', {
  GET: route(
    {
      summary:
        'Base models of this server: size, context length, who trains and serves each, and whether it is available',
      tag: 'models',
      extension: true,
      response: baseModelListSchema,
    },
    async () => ({ object: 'list' as const, data: await baseModelDtos() }),
  ),
});
