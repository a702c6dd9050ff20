import { methods, route } from '@/lib/api/route';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { availableBaseModels } from '@/lib/services/base-models';

export const dynamic = 'force-dynamic';

/** Extension: base models a model record can be created from on this server. */
export const { GET, POST, PUT, PATCH, DELETE } = methods({
  GET: route(
    { summary: 'Base models available on this server', tag: 'models', extension: true, response: baseModelListSchema },
    async () => ({
      object: 'list' as const,
      data: availableBaseModels().map((m) => ({ id: m.id, backend: m.backend, description: m.description ?? null })),
    }),
  ),
});
