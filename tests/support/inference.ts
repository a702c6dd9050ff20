import type { ModelConfig } from '@/lib/engine/model';
import { Tokenizer } from '@/lib/engine/tokenizer';
import type { EngineEvent, TokenEvent } from '@/lib/inference/engine-events';
import type { TokenCandidate } from '@/lib/inference/logprobs';
import {
  parseChatRequest,
  resolveSamplingRequest,
  type SamplingContext,
  type SamplingRequest,
} from '@/lib/inference/chat-request';

/** Test fixtures shared by the response-builder tests (kept out of lib/ so production code cannot import them). */

export function samplingFor(body: Record<string, unknown>, ctx: Partial<SamplingContext> = {}): SamplingRequest {
  return validateChatRequest(
    { model: 'wandb-artifact:///acme/agents/agent-001', messages: [{ role: 'user', content: 'Say hello' }], ...body },
    {
      vocabSize: 200_000,
      maxModelLen: 4096,
      promptTokenCount: 12,
      maxLogprobs: 20,
      generationConfig: null,
      headerRequestId: '5e0f…',
      ...ctx,
    },
  );
}

export function token(
  choice: number,
  tokenId: number,
  text: string,
  logprob: number,
  extra: Partial<Omit<TokenEvent, 'type' | 'choice' | 'tokenId' | 'text' | 'logprob'>> = {},
): TokenEvent {
  const topLogprobs: TokenCandidate[] = [{ tokenId, tokenText: text, logprob }];
  return { type: 'token', choice, tokenId, text, tokenText: text, logprob, topLogprobs, ...extra };
}

export async function* fromArray(events: EngineEvent[]): AsyncGenerator<EngineEvent> {
  for (const e of events) yield e;
}

export function ids(n: number, start = 1): number[] {
  return Array.from({ length: n }, (_, i) => start + i);
}

/** A very small model over the byte vocabulary: fast enough for scheduler and worker-pool tests. */
export const TINY_TEST_CONFIG: ModelConfig = {
  vocab: new Tokenizer().vocabSize,
  d_model: 32,
  n_layers: 2,
  n_heads: 2,
  n_kv_heads: 2,
  d_ff: 64,
  ctx: 64,
  rope_theta: 10000,
  norm_eps: 1e-5,
  tie_embeddings: true,
};

/**
 * Every phase at once for a known prompt length (the service runs them one by one around the model lookup
 * and the template): phase 1, then the template checks and phase 2.
 */
export function validateChatRequest(
  rawJsonBody: unknown,
  ctx: Omit<SamplingContext, 'promptTokenCount'> & { promptTokenCount?: number },
): SamplingRequest {
  const req = parseChatRequest(rawJsonBody);
  return resolveSamplingRequest(req, { ...ctx, promptTokenCount: ctx.promptTokenCount ?? 0 });
}
