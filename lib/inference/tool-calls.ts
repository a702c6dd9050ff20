import type { ChatToolCall } from '@/lib/schemas/chat';
import { pyJsonDumps, pyJsonLoads, type PyJson } from './python-json';

/**
 * Hermes-style tool calls (docs/contract.md §8.12), as vLLM's `hermes` parser that ART runs: blocks of
 * `<tool_call>{"name": …, "arguments": {…}}</tool_call>` in the generated text. Used only when the request
 * has tools and no `tool_choice`.
 */

export const TOOL_CALL_START = '<tool_call>';
export const TOOL_CALL_END = '</tool_call>';

export interface ToolCallOptions {
  /** `parallel_tool_calls: false` keeps only the first call. */
  parallelToolCalls: boolean;
  /** Id source; default `chatcmpl-tool-` + 32 random hex digits (vLLM's `random_uuid()`). */
  newId?: () => string;
}

export function newToolCallId(): string {
  return `chatcmpl-tool-${globalThis.crypto.randomUUID().replace(/-/g, '')}`;
}

/** One block's JSON → a call, or null when vLLM's parser would raise (not a dict, no string name, no arguments). */
function toToolCall(body: string, newId: () => string): ChatToolCall | null {
  let node: PyJson;
  try {
    node = pyJsonLoads(body);
  } catch {
    return null;
  }
  if (node.kind !== 'dict') return null;
  const name = node.entries.find(([k]) => k === 'name')?.[1];
  const args = node.entries.find(([k]) => k === 'arguments')?.[1];
  if (!name || name.kind !== 'str' || !args) return null;
  // vLLM re-serialises the arguments with json.dumps(..., ensure_ascii=False), whatever their type.
  return { id: newId(), type: 'function', function: { name: name.value, arguments: pyJsonDumps(args) } };
}

export interface ParsedToolCalls {
  /** Text before the first block (null if empty); the whole text when nothing parsed. */
  content: string | null;
  toolCalls: ChatToolCall[];
}

// The parser's regex: a closed block, or an unclosed one running to the end of the text.
const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;

/**
 * Non-stream extraction (`Hermes2ProToolParser.extract_tool_calls`): every block must parse, or the output
 * is plain content. With calls, content is the text before the first block, or null when that is empty.
 */
export function parseToolCalls(text: string, options: ToolCallOptions): ParsedToolCalls {
  const start = text.indexOf(TOOL_CALL_START);
  if (start === -1) return { content: text, toolCalls: [] };
  const newId = options.newId ?? newToolCallId;
  const calls: ChatToolCall[] = [];
  for (const m of text.matchAll(BLOCK)) {
    // Python: `match[0] if match[0] else match[1]` — an empty closed block falls through to the (empty) second group.
    const call = toToolCall(m[1] ? m[1] : (m[2] ?? ''), newId);
    if (!call) return { content: text, toolCalls: [] };
    calls.push(call);
  }
  const before = text.slice(0, start);
  return { content: before === '' ? null : before, toolCalls: options.parallelToolCalls ? calls : calls.slice(0, 1) };
}

export interface ToolCallDelta {
  /** Content that can be shown now. */
  content: string;
  /** Calls completed by this push, each with its index among the emitted calls. */
  toolCalls: (ChatToolCall & { index: number })[];
}

/** Longest suffix of `text` that is a proper prefix of `<tool_call>`: it may still become a block. */
function partialStartLength(text: string): number {
  for (let k = Math.min(TOOL_CALL_START.length - 1, text.length); k > 0; k--) {
    if (TOOL_CALL_START.startsWith(text.slice(text.length - k))) return k;
  }
  return 0;
}

/**
 * Streaming extraction ([DEC] docs/contract.md §8.14 "streamed tool calls"): content streams until a `<tool_call>` begins,
 * each call is emitted whole once its block closes. Text after the first block start is never content,
 * except when no call parsed at all: then it is released as content at the end, which is what the
 * non-stream parser answers. A block that fails to parse ends the extraction (the calls already sent stay).
 */
export class ToolCallStreamParser {
  private pending = '';
  private inTools = false;
  private failed = false;
  private afterStart = '';
  private emitted = 0;
  private readonly newId: () => string;

  constructor(private readonly options: ToolCallOptions) {
    this.newId = options.newId ?? newToolCallId;
  }

  /** True once a call has been emitted: the choice then finishes with `tool_calls`. */
  get called(): boolean {
    return this.emitted > 0;
  }

  push(text: string): ToolCallDelta {
    const out: ToolCallDelta = { content: '', toolCalls: [] };
    if (!this.inTools) {
      this.pending += text;
      const start = this.pending.indexOf(TOOL_CALL_START);
      if (start === -1) {
        const keep = partialStartLength(this.pending);
        out.content = this.pending.slice(0, this.pending.length - keep);
        this.pending = this.pending.slice(this.pending.length - keep);
        return out;
      }
      out.content = this.pending.slice(0, start);
      this.pending = this.pending.slice(start);
      this.afterStart = this.pending;
      this.inTools = true;
    } else {
      this.pending += text;
      this.afterStart += text;
    }
    this.drainBlocks(out);
    return out;
  }

  private emit(call: ChatToolCall | null, out: ToolCallDelta): void {
    if (!call) {
      this.failed = true;
      return;
    }
    if (!this.options.parallelToolCalls && this.emitted > 0) return;
    out.toolCalls.push({ ...call, index: this.emitted });
    this.emitted++;
  }

  private drainBlocks(out: ToolCallDelta): void {
    while (!this.failed) {
      const start = this.pending.indexOf(TOOL_CALL_START);
      if (start === -1) {
        // Text between blocks is dropped; keep only what may still open the next block.
        this.pending = this.pending.slice(this.pending.length - partialStartLength(this.pending));
        return;
      }
      const end = this.pending.indexOf(TOOL_CALL_END, start + TOOL_CALL_START.length);
      if (end === -1) {
        this.pending = this.pending.slice(start);
        return;
      }
      const body = this.pending.slice(start + TOOL_CALL_START.length, end);
      this.pending = this.pending.slice(end + TOOL_CALL_END.length);
      this.emit(body ? toToolCall(body, this.newId) : null, out);
    }
  }

  /** End of output: an unclosed last block is parsed to the end of the text (the regex's second branch). */
  finish(): ToolCallDelta {
    const out: ToolCallDelta = { content: '', toolCalls: [] };
    if (!this.inTools) {
      out.content = this.pending;
      this.pending = '';
      return out;
    }
    if (!this.failed && this.pending.startsWith(TOOL_CALL_START)) {
      this.emit(toToolCall(this.pending.slice(TOOL_CALL_START.length), this.newId), out);
    }
    this.pending = '';
    if (this.emitted === 0) out.content = this.afterStart;
    return out;
  }
}
