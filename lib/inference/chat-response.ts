import type { ChatChoice, ChatCompletionResponse, ChatToolCall } from '@/lib/schemas/chat';
import { ChoiceOutput, type OutputSpec } from './choice-output';
import type { EngineEvent } from './engine-events';
import { formatPromptLogprobs, type PromptPositionLogprobs } from './logprobs';
import { wireJson } from './python-json';
import { splitReasoning, type ReasoningSetup } from './reasoning';
import { parseToolCalls } from './tool-calls';

export interface ResponseContext {
  /** Unix seconds. */
  created: number;
  /** The prompt as the engine saw it (after truncation): usage and `prompt_token_ids`. */
  promptTokenIds: readonly number[];
  /** Per prompt position (the first is null), when the request asked for prompt logprobs. */
  promptLogprobs?: readonly (PromptPositionLogprobs | null)[] | null;
  /** Tool-call id source (tests); default `chatcmpl-tool-<32 hex>`. */
  newToolCallId?: () => string;
  /** The model's reasoning parser applies (reasoning.ts); absent or null: none, `reasoning` stays null. */
  reasoning?: ReasoningSetup | null;
}

/**
 * The non-stream response (docs/contract.md §8.13): every key printed, nulls included, in vLLM's key order. Feed it the
 * engine events of all choices, then `build()`.
 */
export class ChatCompletionBuilder {
  private readonly outputs: ChoiceOutput[];

  constructor(
    private readonly spec: OutputSpec,
    private readonly ctx: ResponseContext,
  ) {
    this.outputs = Array.from({ length: spec.n }, () => new ChoiceOutput(spec, false));
  }

  push(event: EngineEvent): void {
    const output = this.outputs[event.choice];
    if (!output) throw new Error(`engine event for choice ${event.choice} of a request with n=${this.spec.n}`);
    output.apply(event);
  }

  private choice(output: ChoiceOutput, index: number): ChatChoice {
    let content: string | null = output.text;
    let reasoning: string | null = null;
    // vLLM's order: the reasoning parser splits the (stop-cut) text first; tool calls are parsed from the content.
    if (this.ctx.reasoning) ({ reasoning, content } = splitReasoning(output.text, this.ctx.reasoning));
    let toolCalls: ChatToolCall[] = [];
    if (this.spec.parse_tool_calls && content !== null) {
      const parsed = parseToolCalls(content, {
        parallelToolCalls: this.spec.parallel_tool_calls,
        newId: this.ctx.newToolCallId,
      });
      content = parsed.content;
      toolCalls = parsed.toolCalls;
    }
    // docs/contract.md §8.7: echo prepends the last message's content (empty when its role differs) to the generated text.
    if (this.spec.echo) content = this.spec.echo_text + (content ?? '');
    return {
      index,
      message: {
        role: this.spec.response_role,
        content,
        refusal: null,
        annotations: null,
        audio: null,
        function_call: null,
        tool_calls: toolCalls,
        // `reasoning` is vLLM's field; `reasoning_content`, its older name, carries the same text for the
        // clients that still read it (docs/vllm-compat.md, "Reasoning outputs").
        reasoning,
        reasoning_content: reasoning,
      },
      logprobs: { content: [...output.logprobs] },
      finish_reason: toolCalls.length ? 'tool_calls' : (output.finishReason ?? 'stop'),
      stop_reason: output.stopReason,
      token_ids: this.spec.return_token_ids ? [...output.tokenIds] : null,
    };
  }

  build(): ChatCompletionResponse {
    const unfinished = this.outputs.findIndex((o) => !o.finished);
    if (unfinished !== -1) throw new Error(`engine events ended before choice ${unfinished} finished`);
    const prompt = this.ctx.promptTokenIds.length;
    const completion = this.outputs.reduce((sum, o) => sum + o.tokenIds.length, 0);
    return {
      id: this.spec.response_id,
      object: 'chat.completion',
      created: this.ctx.created,
      model: this.spec.model,
      choices: this.outputs.map((o, i) => this.choice(o, i)),
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: prompt,
        total_tokens: prompt + completion,
        completion_tokens: completion,
        prompt_tokens_details: null,
      },
      prompt_logprobs:
        this.spec.prompt_logprobs !== null && this.ctx.promptLogprobs
          ? formatPromptLogprobs(this.ctx.promptLogprobs, this.spec.prompt_logprobs)
          : null,
      prompt_token_ids: this.spec.return_token_ids ? [...this.ctx.promptTokenIds] : null,
      kv_transfer_params: null,
    };
  }
}

/** Drains the engine events of a non-stream request into the response object. */
export async function collectChatCompletion(
  events: AsyncIterable<EngineEvent> | Iterable<EngineEvent>,
  spec: OutputSpec,
  ctx: ResponseContext,
): Promise<ChatCompletionResponse> {
  const builder = new ChatCompletionBuilder(spec, ctx);
  for await (const event of events) builder.push(event);
  return builder.build();
}

/**
 * The body bytes: compact JSON like vLLM's, with `logprob` values printed as Python floats (`0.0`,
 * `-9999.0`). `JSON.stringify` of the same object is equally valid for every client.
 */
export function serializeChatCompletion(response: ChatCompletionResponse): string {
  return wireJson(response);
}
