/**
 * Reasoning outputs (docs/vllm-compat.md, "Reasoning outputs"): vLLM's `qwen3` and `deepseek_r1` reasoning
 * parsers, for the models the built-in engine serves. The text between `<think>` and `</think>` goes to
 * `reasoning` (and its older name `reasoning_content`), the rest to `content`; the tags themselves to neither.
 * vLLM serves its own models with its own `--reasoning-parser`, so this runs only for the built-in engine.
 *
 * Both parsers use the same tags and, in vLLM's current versions, the same rules:
 * - Whether the answer starts inside a think block: not when the prompt already closed one (the last of
 *   `<think>` / `</think>` in the prompt is `</think>`: vLLM's `prompt_is_reasoning_end`, which is what a
 *   Qwen3 template with `enable_thinking: false` renders), nor, for `qwen3`, when the request says
 *   `chat_template_kwargs.enable_thinking: false`. Then the whole answer is content.
 * - Otherwise the answer is reasoning until the first `</think>`, content after it. A `<think>` before that
 *   (older Qwen3 templates let the model write it) is dropped. No `</think>` at all: everything is
 *   reasoning and `content` is null (vLLM ≥ 0.19; a truncated or never-closed think block).
 */

export const REASONING_PARSERS = ['qwen3', 'deepseek_r1'] as const;
export type ReasoningParserName = (typeof REASONING_PARSERS)[number];

export const THINK_START = '<think>';
export const THINK_END = '</think>';

/** How one choice's output is split, decided per request before generation. */
export interface ReasoningSetup {
  /** False when the prompt (or `enable_thinking: false`) already ended reasoning: everything is content. */
  startsInReasoning: boolean;
  /** `include_reasoning` (default true): false drops the reasoning text from the answer; content is unchanged. */
  include: boolean;
}

/**
 * vLLM's `is_reasoning_end(prompt_token_ids)`: scanning the prompt backwards, a `</think>` before any `<think>`
 * means the template closed the think block itself (Qwen3 with `enable_thinking: false` ends its prompt with
 * `<think>\n\n</think>\n\n`).
 */
export function promptEndsReasoning(promptIds: readonly number[], startId: number, endId: number): boolean {
  for (let i = promptIds.length - 1; i >= 0; i--) {
    if (promptIds[i] === startId) return false;
    if (promptIds[i] === endId) return true;
  }
  return false;
}

/** Whether a request for a model with `parser` starts its answer inside the think block. */
export function startsInReasoning(
  parser: ReasoningParserName,
  promptEnds: boolean,
  chatTemplateKwargs: Record<string, unknown> | null | undefined,
): boolean {
  if (promptEnds) return false;
  // Qwen3's parser honours the template switch; DeepSeek R1's template has none and its parser ignores it.
  if (parser === 'qwen3' && chatTemplateKwargs?.enable_thinking === false) return false;
  return true;
}

/** Longest suffix of `text` that is a proper prefix of `tag`: it may still become the tag. */
function partialTagLength(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (tag.startsWith(text.slice(text.length - k))) return k;
  }
  return 0;
}

export interface ReasoningDelta {
  reasoning: string;
  content: string;
}

/**
 * Splits a choice's text as it is released. Text-based, so a tag split across tokens (or several tokens in
 * one release, as the stop-string holdback makes) is found all the same: a tail that may still become a tag
 * waits for the next text. A stream therefore ends with exactly what the whole-answer split gives.
 */
export class ReasoningSplitter {
  private inReasoning: boolean;
  /** Set once the think block closed (`</think>` seen): whole answers then report reasoning even if empty. */
  private closed = false;
  private startDropped = false;
  private pending = '';

  constructor(startsInReasoning: boolean) {
    this.inReasoning = startsInReasoning;
  }

  /** Whether the output is (still) inside the think block. */
  get reasoning(): boolean {
    return this.inReasoning;
  }

  get ended(): boolean {
    return this.closed;
  }

  push(text: string): ReasoningDelta {
    if (!this.inReasoning) return { reasoning: '', content: text };
    let reasoning = '';
    this.pending += text;
    for (;;) {
      const end = this.pending.indexOf(THINK_END);
      const start = this.startDropped ? -1 : this.pending.indexOf(THINK_START);
      if (start !== -1 && (end === -1 || start < end)) {
        reasoning += this.pending.slice(0, start);
        this.pending = this.pending.slice(start + THINK_START.length);
        this.startDropped = true;
        continue;
      }
      if (end !== -1) {
        reasoning += this.pending.slice(0, end);
        const content = this.pending.slice(end + THINK_END.length);
        this.pending = '';
        this.inReasoning = false;
        this.closed = true;
        return { reasoning, content };
      }
      const keep = Math.max(
        partialTagLength(this.pending, THINK_END),
        this.startDropped ? 0 : partialTagLength(this.pending, THINK_START),
      );
      reasoning += this.pending.slice(0, this.pending.length - keep);
      this.pending = this.pending.slice(this.pending.length - keep);
      return { reasoning, content: '' };
    }
  }

  /** End of output: a held-back tail that never became a tag is reasoning after all. */
  finish(): ReasoningDelta {
    const reasoning = this.pending;
    this.pending = '';
    return { reasoning, content: '' };
  }
}

export interface SplitReasoning {
  /** null when the answer started outside a think block (or include_reasoning is false). */
  reasoning: string | null;
  /** null when nothing follows `</think>`, or the think block never closed. */
  content: string | null;
}

/** The whole-answer split (vLLM's `extract_reasoning`), with the same rules as the stream. */
export function splitReasoning(text: string, setup: ReasoningSetup): SplitReasoning {
  if (!setup.startsInReasoning) return { reasoning: null, content: text };
  const splitter = new ReasoningSplitter(true);
  const a = splitter.push(text);
  const b = splitter.finish();
  const reasoning = a.reasoning + b.reasoning;
  return { reasoning: setup.include ? reasoning : null, content: a.content === '' ? null : a.content };
}
