import { methods, route } from '@/lib/api/route';
import { chatCompletionBodySchema } from '@/lib/schemas/chat';
import { createChatCompletion } from '@/lib/services/chat';

export const dynamic = 'force-dynamic';

/**
 * vLLM's chat completions. Serves /v1/chat/completions and, with skipTrailingSlashRedirect, the same path
 * with a trailing slash (docs/contract.md §1.2). The body schema accepts any JSON: lib/inference validates it in
 * vLLM's own order, which a generic parse here would break.
 */
export const { GET, POST, PUT, PATCH, DELETE } = methods(
  '/v1/chat/completions',
  {
    POST: route(
      {
        flavor: 'chat',
        summary: 'Create a chat completion (vLLM extended format; stream with SSE)',
        description:
          'Errors use the OpenAI/vLLM envelope `{"error":{message,type,param,code}}`. Every choice carries token logprobs ' +
          '(`token_id:N`), so RL clients can train on completions that did not ask for them.',
        tag: 'chat',
        requireJson: true,
        body: chatCompletionBodySchema,
      },
      async ({ principal, req, body }) => {
        const result = await createChatCompletion({ principal, body, headers: req.headers, signal: req.signal });
        // No x-request-id here: route() sets it on every response. The body's `request_id` (any string, as vLLM takes
        // it) stays in the response's id; copied into the header, a NUL or a line break in it made a 500.
        if (result.kind === 'json') {
          return new Response(result.body, {
            status: result.status ?? 200,
            headers: { 'content-type': 'application/json' },
          });
        }
        return new Response(result.body, {
          headers: {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache, no-transform',
            'x-accel-buffering': 'no',
          },
        });
      },
    ),
  },
  'chat',
);
