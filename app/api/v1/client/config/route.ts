import { methods, route } from '@/lib/api/route';
import { clientConfigRequestSchema, clientConfigResponseSchema } from '@/lib/schemas/tinker';
import { clientConfig } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/client/config', {
  POST: route(
    {
      // The SDK asks before anything else, with or without its key; the flags are the same for everyone.
      auth: 'public',
      tag: 'tinker',
      summary:
        "The Tinker SDK's feature flags (docs/tinker.md §2.1): API-key auth, httpx's transport, JSON forward_backward bodies for SDK ≤ 0.24 and zstd-compressed protobuf for 0.25",
      body: clientConfigRequestSchema,
      response: clientConfigResponseSchema,
    },
    async () => clientConfig(),
  ),
});
