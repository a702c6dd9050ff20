import { methods, route } from '@/lib/api/route';
import { clientConfigRequestSchema, clientDynamicConfigResponseSchema } from '@/lib/schemas/tinker';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/client/dynamic_config', {
  POST: route(
    {
      auth: 'public',
      tag: 'tinker',
      summary: "The Tinker SDK's periodically refreshed flags: only how often to ask again",
      body: clientConfigRequestSchema,
      response: clientDynamicConfigResponseSchema,
    },
    async () => ({ refresh_interval_sec: 300 }),
  ),
});
