import { clientAddress } from '@/lib/api/client-address';
import { methods, route } from '@/lib/api/route';
import { createdApiKeySchema, tokenBodySchema } from '@/lib/schemas/accounts';
import { createApiKeyWithPassword } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

/** For scripts and CI: email + password in, a new API key out (shown once). */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/auth/token', {
  POST: route(
    {
      summary: 'Exchange email and password for a new API key (for scripts and CI)',
      tag: 'accounts',
      extension: true,
      auth: 'public',
      body: tokenBodySchema,
      response: createdApiKeySchema,
      status: 201,
    },
    ({ req, body }) => createApiKeyWithPassword(body, clientAddress(req)),
  ),
});
