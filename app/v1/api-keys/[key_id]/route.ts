import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { apiKeySchema } from '@/lib/schemas/accounts';
import { idSchema } from '@/lib/schemas/common';
import { revokeApiKey } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

/** Revokes the key; it keeps its row (shown as revoked) so its history stays visible. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/api-keys/[key_id]', {
  DELETE: route(
    {
      summary: 'Revoke an API key',
      tag: 'accounts',
      extension: true,
      params: z.object({ key_id: idSchema }),
      notFound: 'API key not found',
      response: apiKeySchema,
    },
    ({ principal, params }) => revokeApiKey(principal.userId, params.key_id),
  ),
});
