import type { ChatLogprobEntry, FinishReason } from '@/lib/schemas/chat';
import type { EngineEvent } from './engine-events';
import { formatLogprobEntry } from './logprobs';
import { findStopString, releasableEnd, stopHoldback } from './stop-strings';
import type { SamplingRequest } from './chat-request';

/** The request fields the response builders read. */
export type OutputSpec = Pick<
  SamplingRequest,
  | 'response_id'
  | 'model'
  | 'n'
  | 'stop'
  | 'include_stop_str_in_output'
  | 'top_logprobs'
  | 'return_tokens_as_token_ids'
  | 'return_token_ids'
  | 'echo'
  | 'echo_text'
  | 'response_role'
  | 'parse_tool_calls'
  | 'parallel_tool_calls'
  | 'include_usage'
  | 'continuous_usage_stats'
  | 'prompt_logprobs'
>;

export interface ChoiceStep {
  /** Text released by this event (after the docs/contract.md §8.5 text rules and, in streams, the holdback). */
  text: string;
  /** The logprobs entry of this event's token; null for a finish event without a token. */
  entry: ChatLogprobEntry | null;
  tokenId: number | null;
  /** Set when this event ended the choice. */
  finished: boolean;
}

/**
 * One choice's output as the engine reports it, with docs/contract.md §8.5's text rules applied: a stopping EOS /
 * stop-id token adds no text (unless include_stop_str_in_output), a stop string cuts the text at its start
 * (or end), and — `streaming` — the last max(len(stop)) − 1 characters wait until the choice finishes.
 * `token_ids`, logprobs and the token count keep every generated token (docs/contract.md §8.5).
 */
export class ChoiceOutput {
  readonly tokenIds: number[] = [];
  readonly logprobs: ChatLogprobEntry[] = [];
  /** The output text so far (already cut at a stop string). */
  text = '';
  finishReason: Exclude<FinishReason, 'tool_calls'> | null = null;
  stopReason: string | number | null = null;
  private released = 0;
  private readonly holdback: number;

  constructor(
    private readonly spec: OutputSpec,
    private readonly streaming: boolean,
  ) {
    this.holdback = streaming ? stopHoldback(spec.stop, spec.include_stop_str_in_output) : 0;
  }

  get finished(): boolean {
    return this.finishReason !== null;
  }

  apply(event: EngineEvent): ChoiceStep {
    if (this.finished) return { text: '', entry: null, tokenId: null, finished: false };
    const stopReason = event.stopReason ?? null;
    const finishing = event.type === 'finish' || event.finishReason !== undefined;
    let entry: ChatLogprobEntry | null = null;
    let tokenId: number | null = null;

    if (event.type === 'token') {
      tokenId = event.tokenId;
      this.tokenIds.push(event.tokenId);
      entry = formatLogprobEntry(
        { tokenId: event.tokenId, tokenText: event.tokenText, logprob: event.logprob },
        event.topLogprobs,
        { topLogprobs: this.spec.top_logprobs, asTokenIds: this.spec.return_tokens_as_token_ids },
      );
      this.logprobs.push(entry);
      const stoppedByToken = event.finishReason === 'stop' && typeof stopReason !== 'string';
      const added = stoppedByToken && !this.spec.include_stop_str_in_output ? '' : event.text;
      this.text += added;
      if (event.finishReason === 'stop' && typeof stopReason === 'string') {
        const match = findStopString(this.text, added.length, [stopReason], this.spec.include_stop_str_in_output);
        // A whole response is cut exactly at the match, like vLLM's final text. A stream never takes back
        // text it already sent (the holdback makes a real match start after it anyway).
        if (match) this.text = this.text.slice(0, this.streaming ? Math.max(match.cutAt, this.released) : match.cutAt);
      }
    }
    if (finishing) {
      this.finishReason = event.finishReason ?? 'stop';
      this.stopReason = stopReason;
    }
    const end = finishing ? this.text.length : releasableEnd(this.text, this.holdback);
    let text = '';
    if (end > this.released) {
      text = this.text.slice(this.released, end);
      this.released = end;
    }
    return { text, entry, tokenId, finished: finishing };
  }
}
