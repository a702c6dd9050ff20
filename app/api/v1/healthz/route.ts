import { methods, route } from '@/lib/api/route';
import { healthResponseSchema } from '@/lib/schemas/tinker';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/healthz', {
  GET: route(
    {
      auth: 'public',
      tag: 'tinker',
      summary: "The Tinker SDK's liveness check (docs/tinker.md §2.1)",
      response: healthResponseSchema,
    },
    async () => ({ status: 'ok' as const }),
  ),
});
