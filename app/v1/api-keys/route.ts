import { methods, route } from '@/lib/api/route';
import { apiKeyListSchema, createApiKeyBodySchema, createdApiKeySchema } from '@/lib/schemas/accounts';
import { createApiKey, listApiKeys } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/api-keys', {
  GET: route(
    {
      summary: 'List the caller’s API keys (never the secrets)',
      tag: 'accounts',
      extension: true,
      response: apiKeyListSchema,
    },
    async ({ principal }) => ({
      object: 'list' as const,
      data: await listApiKeys(principal.userId),
    }),
  ),
  POST: route(
    {
      summary: 'Create an API key; the secret is returned once',
      tag: 'accounts',
      extension: true,
      body: createApiKeyBodySchema,
      response: createdApiKeySchema,
      status: 201,
    },
    ({ principal, body }) => createApiKey(principal.userId, body),
  ),
});
