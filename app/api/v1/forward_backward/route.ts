import { methods, route } from '@/lib/api/route';
import { submitForward } from '@/lib/api/tinker-forward';
import { untypedApiFutureSchema } from '@/lib/schemas/tinker';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/forward_backward', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        "Forward and backward pass on a training client: per-token logprobs and loss:sum now, the loss's gradient added to its accumulated gradients (docs/tinker.md §2.4)",
      streamedBody: {
        description:
          "The SDK's request: JSON (ForwardBackwardRequest, SDK 0.18–0.24) or protobuf (tinker_public.ForwardBackwardRequest, lib/tinker/tinker_public.proto, SDK 0.25, optionally Content-Encoding: zstd)",
        content: {
          'application/json': { schema: { type: 'object' } },
          'application/x-protobuf': { schema: { type: 'string', contentMediaType: 'application/x-protobuf' } },
        },
      },
      response: untypedApiFutureSchema,
    },
    async ({ req, principal }) => submitForward(req, principal, 'forward_backward'),
  ),
});
