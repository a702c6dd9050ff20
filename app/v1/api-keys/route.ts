import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { apiKeySchema, createApiKeyBodySchema, createdApiKeySchema } from '@/lib/schemas/accounts';
import { createApiKey, listApiKeys } from '@/lib/services/accounts';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  GET: route({ response: z.object({ object: z.literal('list'), data: z.array(apiKeySchema) }) }, async ({ principal }) => ({
    object: 'list' as const,
    data: await listApiKeys(principal.userId),
  })),
  POST: route({ body: createApiKeyBodySchema, response: createdApiKeySchema, status: 201 }, ({ principal, body }) =>
    createApiKey(principal.userId, body),
  ),
});
