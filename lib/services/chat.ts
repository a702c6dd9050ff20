import 'server-only';
import { parseChatRequest } from '@/lib/inference/chat-request';
import type { ChatResult } from '@/lib/inference/backends';
import type { Principal } from './accounts';
import { resolveChatModel } from './chat-models';
import { recordUsage, usageTarget } from './usage';

export type { ChatResult } from '@/lib/inference/backends';

/**
 * POST /v1/chat/completions, in vLLM's order: the request validators, model resolution (404), then the
 * model's backend (built-in engine or vLLM), which owns template, tokenization, context and sampling
 * checks, generation and the bytes of the answer; usage is recorded once the backend knows the counts.
 * Returns the body (JSON text or an SSE stream) for the route to send; no HTTP types here.
 */
export async function createChatCompletion(input: {
  principal: Principal;
  body: unknown;
  headers: Headers;
  signal: AbortSignal;
}): Promise<ChatResult> {
  const request = parseChatRequest(input.body);
  const served = await resolveChatModel(input.principal, request.model);
  const target = usageTarget(input.principal, input.headers, served.owner);
  return served.backend.chat({
    body: input.body,
    request,
    modelAsSent: request.model as string,
    headers: input.headers,
    signal: input.signal,
    onUsage: ({ promptTokens, completionTokens }) => {
      recordUsage({ ...target, model: served.usageName, promptTokens, completionTokens });
    },
  });
}
