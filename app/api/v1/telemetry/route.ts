import { methods, route } from '@/lib/api/route';
import { telemetryResponseSchema, telemetrySendRequestSchema } from '@/lib/schemas/tinker';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/telemetry', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary: 'SDK telemetry: accepted and dropped (nothing leaves this server)',
      body: telemetrySendRequestSchema,
      response: telemetryResponseSchema,
    },
    async () => ({ status: 'accepted' as const }),
  ),
});
