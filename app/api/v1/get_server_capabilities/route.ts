import { methods, route } from '@/lib/api/route';
import { getServerCapabilitiesResponseSchema } from '@/lib/schemas/tinker';
import { describeBaseModels } from '@/lib/services/base-models';
import { serverCapabilities } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/get_server_capabilities', {
  GET: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'The base models a connected Python worker can train as Tinker training clients (hf models of the base-models file), with their context lengths',
      response: getServerCapabilitiesResponseSchema,
    },
    async () => serverCapabilities(new Map((await describeBaseModels()).map((m) => [m.id, m.contextLength]))),
  ),
});
