import { methods, route } from '@/lib/api/route';
import { submitForward } from '@/lib/api/tinker-forward';
import { untypedApiFutureSchema } from '@/lib/schemas/tinker';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/forward', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Forward pass without gradients on a training client: per-token logprobs and loss:sum (SDK ≤ 0.24, JSON)',
      streamedBody: {
        description: "The SDK's ForwardRequest, JSON",
        content: { 'application/json': { schema: { type: 'object' } } },
      },
      response: untypedApiFutureSchema,
    },
    async ({ req, principal }) => submitForward(req, principal, 'forward'),
  ),
});
