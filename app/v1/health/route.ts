import { methods, route } from '@/lib/api/route';
import { healthSchema } from '@/lib/schemas/health';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/health', {
  GET: route(
    { summary: 'Liveness: always {"status":"ok"}; public', tag: 'health', auth: 'public', response: healthSchema },
    async () => ({ status: 'ok' as const }),
  ),
});
