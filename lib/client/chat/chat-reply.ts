import type { ChatCompletionChunk } from '@/lib/schemas/chat';

/** One sampled token with the alternatives the server reported for its position. */
export interface TokenEntry {
  token: string;
  logprob: number;
  /** UTF-8 bytes of the token: a byte-level token that is part of a character shows as U+FFFD otherwise. */
  bytes: number[] | null;
  top: { token: string; logprob: number; bytes: number[] | null }[];
}

export interface ChoiceReply {
  content: string;
  /**
   * The think block's text, for a model with a reasoning parser (`delta.reasoning`, or `reasoning_content` from an
   * older vLLM); null until any arrives, so an answer without reasoning shows no reasoning block.
   */
  reasoning: string | null;
  /** How many tokens the reasoning took: the logprob entries of the chunks that carried it (one per token). */
  reasoningTokens: number;
  tokens: TokenEntry[];
  /** stop, length, abort…; null while streaming. */
  finishReason: string | null;
}

export interface ReplyUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** An assistant answer being streamed (or finished): one entry per choice (`n`). */
export interface AssistantReply {
  choices: ChoiceReply[];
  usage: ReplyUsage | null;
}

export const emptyReply = (): AssistantReply => ({ choices: [], usage: null });

/**
 * Folds one stream chunk into the reply, immutably (React state). Chunks carry one choice each on this
 * server, but several per chunk are handled too, as OpenAI's format allows; the usage chunk has none.
 */
export function applyChunk(reply: AssistantReply, chunk: ChatCompletionChunk): AssistantReply {
  let choices = reply.choices;
  for (const choice of chunk.choices) {
    if (choices === reply.choices) choices = [...choices];
    while (choices.length <= choice.index)
      choices.push({ content: '', reasoning: null, reasoningTokens: 0, tokens: [], finishReason: null });
    const prev = choices[choice.index];
    const tokens = choice.logprobs?.content?.map((entry) => ({
      token: entry.token,
      logprob: entry.logprob,
      bytes: entry.bytes,
      top: entry.top_logprobs.map((alt) => ({ token: alt.token, logprob: alt.logprob, bytes: alt.bytes })),
    }));
    const reasoning = choice.delta.reasoning ?? choice.delta.reasoning_content;
    choices[choice.index] = {
      content: prev.content + (choice.delta.content ?? ''),
      reasoning: reasoning !== undefined ? (prev.reasoning ?? '') + reasoning : prev.reasoning,
      reasoningTokens: prev.reasoningTokens + (reasoning !== undefined ? Math.max(1, tokens?.length ?? 0) : 0),
      tokens: tokens && tokens.length > 0 ? [...prev.tokens, ...tokens] : prev.tokens,
      finishReason: choice.finish_reason ?? prev.finishReason,
    };
  }
  const usage = chunk.usage
    ? { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens }
    : reply.usage;
  return choices === reply.choices && usage === reply.usage ? reply : { choices, usage };
}

/** A stop by the user: every unfinished choice ends as `abort`, keeping the text received so far. */
export function markStopped(reply: AssistantReply): AssistantReply {
  return { ...reply, choices: reply.choices.map((c) => (c.finishReason ? c : { ...c, finishReason: 'abort' })) };
}
