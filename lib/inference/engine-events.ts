import type { FinishReason } from '@/lib/schemas/chat';
import type { TokenCandidate } from './logprobs';

/**
 * What a generation backend reports, per choice, for the response builders (sse.ts for streams,
 * chat-response.ts for whole responses). Events of different choices may interleave; each choice's
 * events are in generation order and end with exactly one event that carries a `finishReason`.
 *
 * Division of work on docs/contract.md §8.5:
 * - The engine decides when a choice stops (EOS unless ignore_eos, stop_token_ids, stop strings — found
 *   with `findStopString` from stop-strings.ts on the raw text, not before `min_tokens` tokens —, max_tokens,
 *   context full) and reports it on the token that stopped it, with `stopReason` as docs/contract.md §8.5 defines it.
 * - The engine reports each token's raw detokenised `text` (the IncrementalDetokenizer output, nothing
 *   cut). The builders apply the text rules: they drop the text of a stopping EOS / stop-id token (unless
 *   include_stop_str_in_output), cut at the stop string, hold back the stream tail, and parse tool calls.
 * - Logprobs are reported for every token (they are always returned, docs/contract.md §8.8); the builders format them.
 */
export interface TokenEvent {
  type: 'token';
  /** Choice index, 0..n−1. */
  choice: number;
  tokenId: number;
  /** Text this token adds to the output, from the incremental detokenizer. */
  text: string;
  /**
   * vLLM's `decoded_token`, the `token`/`bytes` of its logprobs entry: the token decoded on its own, or for
   * a piece of a multi-byte character what `vllmDecodedTokens` (logprobs.ts) gives.
   */
  tokenText: string;
  /** Log-probability of the sampled token under the raw logits. */
  logprob: number;
  /** The `top_logprobs` best candidates by rank, best first (the sampled token may be among them). */
  topLogprobs: readonly TokenCandidate[];
  /** Set on the last token of the choice. */
  finishReason?: Exclude<FinishReason, 'tool_calls'>;
  /** With `finishReason: 'stop'`: the stop string, the stop token id, or null for EOS. */
  stopReason?: string | number | null;
}

/** A choice that ends without a new token (e.g. aborted by the client). */
export interface FinishEvent {
  type: 'finish';
  choice: number;
  finishReason: Exclude<FinishReason, 'tool_calls'>;
  stopReason?: string | number | null;
}

export type EngineEvent = TokenEvent | FinishEvent;
