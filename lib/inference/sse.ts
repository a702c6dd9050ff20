/**
 * Streaming responses of POST /v1/chat/completions, byte for byte as docs/contract.md §8.14 describes them.
 *
 * Input: an async iterable of engine events (engine-events.ts):
 *
 *   { type: 'token', choice, tokenId, text, tokenText, logprob, topLogprobs, finishReason?, stopReason? }
 *   { type: 'finish', choice, finishReason, stopReason? }        // a choice ending without a new token
 *
 * `text` is the token's raw detokenised text; a choice's last event carries `finishReason` (and
 * `stopReason`: the stop string, the stop token id, or null for EOS). The engine decides when to stop;
 * this module applies the text rules (stop-string cut, EOS/stop-id text, holdback), tool-call parsing and
 * logprob formatting.
 *
 * Output, one `data: <compact JSON>\n\n` event per chunk, flushed as produced:
 *   1. a role chunk per choice (`prompt_token_ids` on it), 2. an echo chunk per choice (docs/contract.md §8.7),
 *   3. one chunk per token (one choice per chunk), the last one of each choice merged with
 *      `finish_reason` / `stop_reason`, 4. the usage chunk (`choices: []`) if include_usage,
 *   5. `data: [DONE]\n\n`.
 * A failure after the first byte becomes the docs/contract.md §8.15 error event followed by [DONE]; the status stays 200.
 */
import type { ChatCompletionChunk, ChatDelta, ChatStreamChoice } from '@/lib/schemas/chat';
import { STREAM_ERROR_BODY } from './chat-errors';
import { ChoiceOutput, type OutputSpec } from './choice-output';
import type { EngineEvent } from './engine-events';
import { wireJson } from './python-json';
import { ReasoningSplitter, type ReasoningSetup } from './reasoning';
import { ToolCallStreamParser, type ToolCallDelta } from './tool-calls';

export type { EngineEvent, FinishEvent, TokenEvent } from './engine-events';
export type { OutputSpec } from './choice-output';

export const SSE_DONE = 'data: [DONE]\n\n';

/** One SSE event: no `event:`/`id:` lines, no `\r`, JSON on a single line (compact JSON has no raw newline). */
export function sseEvent(json: string): string {
  return `data: ${json}\n\n`;
}

export interface StreamContext {
  /** Unix seconds, the same on every chunk. */
  created: number;
  /** The prompt as the engine saw it (after truncation): the usage counts and `prompt_token_ids`. */
  promptTokenIds: readonly number[];
  /** Tool-call id source (tests); default `chatcmpl-tool-<32 hex>`. */
  newToolCallId?: () => string;
  /** The model's reasoning parser applies (reasoning.ts); absent or null: none. */
  reasoning?: ReasoningSetup | null;
}

type Usage = NonNullable<ChatCompletionChunk['usage']>;

/**
 * The pure chunk builder: feed it events, get SSE event strings. `start()` once, `push(event)` per engine
 * event, then `end()` (or `error()` on failure).
 */
export class ChatStreamEncoder {
  private readonly outputs: ChoiceOutput[];
  private readonly parsers: (ToolCallStreamParser | null)[];
  private readonly splitters: (ReasoningSplitter | null)[];
  private closed = false;
  private headJson: string | null = null;

  constructor(
    private readonly spec: OutputSpec,
    private readonly ctx: StreamContext,
  ) {
    this.outputs = Array.from({ length: spec.n }, () => new ChoiceOutput(spec, true));
    this.parsers = Array.from({ length: spec.n }, () =>
      spec.parse_tool_calls
        ? new ToolCallStreamParser({ parallelToolCalls: spec.parallel_tool_calls, newId: ctx.newToolCallId })
        : null,
    );
    const reasoning = ctx.reasoning;
    this.splitters = Array.from({ length: spec.n }, () =>
      reasoning ? new ReasoningSplitter(reasoning.startsInReasoning) : null,
    );
  }

  private get promptTokens(): number {
    return this.ctx.promptTokenIds.length;
  }

  private usage(completionTokens: number): Usage {
    return {
      prompt_tokens: this.promptTokens,
      total_tokens: this.promptTokens + completionTokens,
      completion_tokens: completionTokens,
    };
  }

  /**
   * Keys in the order vLLM's pydantic model declares them (id, object, created, model, choices, usage,
   * prompt_token_ids); `usage` only with continuous stats or on the usage chunk, as docs/contract.md §8.14 lists.
   */
  private chunk(
    choices: ChatStreamChoice[],
    extra: { usage?: Usage; prompt_token_ids?: number[] | null } = {},
  ): string {
    // The fields before `choices` are the same on every chunk of a stream: serialised once (see `head`).
    let json = `${this.head}"choices":${wireJson(choices satisfies ChatCompletionChunk['choices'])}`;
    if (extra.usage) json += `,"usage":${wireJson(extra.usage)}`;
    if ('prompt_token_ids' in extra) json += `,"prompt_token_ids":${wireJson(extra.prompt_token_ids)}`;
    return sseEvent(`${json}}`);
  }

  /** `{"id":…,"object":…,"created":…,"model":…,` — the chunk's opening, ready for `"choices"`. */
  private get head(): string {
    if (this.headJson === null) {
      const opening: Omit<ChatCompletionChunk, 'choices'> = {
        id: this.spec.response_id,
        object: 'chat.completion.chunk',
        created: this.ctx.created,
        model: this.spec.model,
      };
      const json = wireJson(opening);
      this.headJson = json === '{}' ? '{' : `${json.slice(0, -1)},`;
    }
    return this.headJson;
  }

  private continuous(completionTokens: number): { usage?: Usage } {
    return this.spec.continuous_usage_stats ? { usage: this.usage(completionTokens) } : {};
  }

  /** Role chunk per choice, then the echo chunk per choice when there is something to echo. */
  start(): string[] {
    const events: string[] = [];
    for (let i = 0; i < this.spec.n; i++) {
      events.push(
        this.chunk(
          [{ index: i, delta: { role: this.spec.response_role, content: '' }, logprobs: null, finish_reason: null }],
          {
            ...this.continuous(0),
            prompt_token_ids: this.spec.return_token_ids ? [...this.ctx.promptTokenIds] : null,
          },
        ),
      );
    }
    if (this.spec.echo && this.spec.echo_text !== '') {
      for (let i = 0; i < this.spec.n; i++) {
        events.push(
          this.chunk(
            [{ index: i, delta: { content: this.spec.echo_text }, logprobs: null, finish_reason: null }],
            this.continuous(0),
          ),
        );
      }
    }
    return events;
  }

  /** The chunk for one engine event (none for events of an already finished choice). */
  push(event: EngineEvent): string[] {
    const i = event.choice;
    const output = this.outputs[i];
    if (!output) throw new Error(`engine event for choice ${i} of a request with n=${this.spec.n}`);
    if (output.finished) return [];
    const step = output.apply(event);

    // The reasoning parser sees the released text first (tags never sent); the tool parser sees only content.
    let reasoningText = '';
    let contentText = step.text;
    const splitter = this.splitters[i];
    if (splitter) {
      const split = splitter.push(step.text);
      if (step.finished) split.reasoning += splitter.finish().reasoning;
      reasoningText = this.ctx.reasoning?.include === false ? '' : split.reasoning;
      contentText = split.content;
    }
    let toolDelta: ToolCallDelta = { content: contentText, toolCalls: [] };
    const parser = this.parsers[i];
    if (parser) {
      toolDelta = parser.push(contentText);
      if (step.finished) {
        const rest = parser.finish();
        toolDelta = {
          content: toolDelta.content + rest.content,
          toolCalls: [...toolDelta.toolCalls, ...rest.toolCalls],
        };
      }
    }
    // Without a tool or reasoning parser every delta carries `content`, `""` when the token added no visible text
    // (EOS, stop ids, held-back text, an incomplete character, a skipped special token): vLLM builds each delta
    // from the token's text. With a parser a delta with nothing new is `{}` (still sent: it has the token's
    // logprobs). Keys in vLLM's DeltaMessage order: content, reasoning (then its older name), tool_calls.
    const delta: ChatDelta = {};
    if ((!parser && !splitter) || toolDelta.content !== '') delta.content = toolDelta.content;
    if (reasoningText !== '') {
      delta.reasoning = reasoningText;
      delta.reasoning_content = reasoningText;
    }
    if (toolDelta.toolCalls.length) {
      delta.tool_calls = toolDelta.toolCalls.map((c) => ({
        index: c.index,
        id: c.id,
        type: c.type,
        function: c.function,
      }));
    }
    if (
      step.tokenId === null &&
      !step.finished &&
      delta.content === undefined &&
      delta.reasoning === undefined &&
      !delta.tool_calls
    )
      return [];

    const choice: ChatStreamChoice = {
      index: i,
      delta,
      logprobs: { content: step.entry ? [step.entry] : [] },
      finish_reason: null,
    };
    if (step.finished) {
      choice.finish_reason = parser?.called ? 'tool_calls' : output.finishReason;
      choice.stop_reason = output.stopReason;
    }
    const tokenIds = step.tokenId === null ? [] : [step.tokenId];
    choice.token_ids = this.spec.return_token_ids ? tokenIds : null;
    return [this.chunk([choice], this.continuous(output.tokenIds.length))];
  }

  /** After the last event: the usage chunk (if asked for) and [DONE]. Every choice must have finished. */
  end(): string[] {
    const unfinished = this.outputs.findIndex((o) => !o.finished);
    if (unfinished !== -1) throw new Error(`engine events ended before choice ${unfinished} finished`);
    this.closed = true;
    const events: string[] = [];
    if (this.spec.include_usage) {
      const completion = this.outputs.reduce((sum, o) => sum + o.tokenIds.length, 0);
      events.push(this.chunk([], { usage: this.usage(completion) }));
    }
    events.push(SSE_DONE);
    return events;
  }

  /** docs/contract.md §8.15: the generic error event, then [DONE]. */
  error(): string[] {
    this.closed = true;
    return [sseEvent(wireJson(STREAM_ERROR_BODY)), SSE_DONE];
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

export interface ChatStreamOptions {
  /** Called with a failure of the event source; the client only sees the generic docs/contract.md §8.15 event. */
  onError?: (err: unknown) => void;
}

/**
 * The response body of a streamed chat completion. Pull-based, so generation is paced by the client;
 * cancelling the body (client gone) calls `return()` on the event iterator so the engine can abort.
 */
export function chatCompletionStream(
  events: AsyncIterable<EngineEvent>,
  spec: OutputSpec,
  ctx: StreamContext,
  options: ChatStreamOptions = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const enc = new ChatStreamEncoder(spec, ctx);
  let iterator: AsyncIterator<EngineEvent> | null = null;
  // Set when the client goes away. A pull may be waiting on the engine at that moment; what it gets afterwards has
  // nowhere to go, and enqueueing it threw "Controller is already closed", which was logged as a server error.
  let cancelled = false;
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, frames: string[]) => {
    if (cancelled) return;
    for (const frame of frames) controller.enqueue(encoder.encode(frame));
  };

  return new ReadableStream<Uint8Array>({
    start(controller) {
      // The role chunk goes out at once: the SDK's stream helpers need a role before anything else (docs/contract.md §8.16).
      send(controller, enc.start());
      iterator = events[Symbol.asyncIterator]();
    },
    async pull(controller) {
      if (!iterator || enc.isClosed) return;
      try {
        // Loop until something is sent, so that a pull always makes progress.
        for (;;) {
          const next = await iterator.next();
          if (cancelled) return;
          if (next.done) {
            send(controller, enc.end());
            controller.close();
            return;
          }
          const frames = enc.push(next.value);
          if (frames.length) {
            send(controller, frames);
            return;
          }
        }
      } catch (err) {
        if (cancelled) return;
        options.onError?.(err);
        send(controller, enc.error());
        controller.close();
        await iterator.return?.().catch(() => undefined);
      }
    },
    async cancel() {
      cancelled = true;
      await iterator?.return?.();
    },
  });
}
