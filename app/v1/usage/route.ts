import { methods, route } from '@/lib/api/route';
import { usageListSchema, usageQuerySchema } from '@/lib/schemas/usage';
import { listUsage } from '@/lib/services/usage';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/usage', {
  GET: route(
    {
      summary: 'Chat token usage per entity, project, model and UTC day',
      tag: 'usage',
      extension: true,
      query: usageQuerySchema,
      response: usageListSchema,
    },
    ({ principal, query }) => listUsage(principal, query),
  ),
});
