import { Template } from '@huggingface/jinja';
import type { Tokenizer } from './tokenizer';

/**
 * Chat templates with vLLM / HF `apply_chat_template` semantics (docs/contract.md §8.12): the template sees
 * `messages`, `tools`, `documents`, `add_generation_prompt`, `continue_final_message`, `bos_token`,
 * `eos_token` and any extra keyword arguments. Rendering is pure string work; tokenising the result is the
 * caller's job (chat inference) or `tokenizeConversation`'s (training).
 */

/** A chat message as clients send it; `content` may be a string, text parts, or null. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  name?: string;
  tool_calls?: unknown[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface RenderOptions {
  tools?: readonly unknown[] | null;
  documents?: readonly unknown[] | null;
  addGenerationPrompt?: boolean;
  /** Leave the final message open (no end-of-turn), so generation continues it (vLLM/HF semantics). */
  continueFinalMessage?: boolean;
  /** Extra template variables (`chat_template_kwargs`, `reasoning_effort`, …); explicit options win. */
  extra?: Record<string, unknown>;
}

export interface ChatTemplateOptions {
  bosToken?: string;
  eosToken?: string;
}

/**
 * OpenAI tools as templates expect them (docs/contract.md §5.2.3, §8.12): a dict with `type` is kept as is, anything
 * else is wrapped as a function; the function's unset keys become null rather than undefined, as vLLM's
 * pydantic dump makes them.
 */
export function normalizeTools(tools: readonly unknown[] | null | undefined): Array<Record<string, unknown>> | null {
  if (!tools || tools.length === 0) return null;
  return tools.map((tool) => {
    const t = (tool && typeof tool === 'object' ? tool : {}) as Record<string, unknown>;
    const wrapped = 'type' in t ? t : { type: 'function', function: t };
    const fn = wrapped.function;
    if (wrapped.type !== 'function' || !fn || typeof fn !== 'object') return wrapped;
    const f = fn as Record<string, unknown>;
    return {
      ...wrapped,
      function: { ...f, name: f.name ?? null, description: f.description ?? null, parameters: f.parameters ?? null },
    };
  });
}

/** Text of a message's content: list content keeps its text parts, joined with "\n" (vLLM's string format). */
export function contentText(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      if (typeof part === 'string') parts.push(part);
      else if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
        parts.push((part as { text: string }).text);
      }
    }
    return parts.join('\n');
  }
  return String(content);
}

function normalizeMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => ({ ...m, content: contentText(m.content) }));
}

// AST keys whose identifiers declare names (loop variables, set targets, macro names, keyword names).
const NON_VARIABLE_KEYS = new Set(['loopvar', 'assignee', 'name', 'key']);

export class ChatTemplate {
  readonly source: string;
  private readonly template: Template;
  private readonly options: ChatTemplateOptions;
  private referenced: Set<string> | null = null;

  constructor(source: string, options: ChatTemplateOptions = {}) {
    this.source = source;
    this.template = new Template(source);
    this.options = options;
  }

  render(messages: readonly ChatMessage[], options: RenderOptions = {}): string {
    const msgs = normalizeMessages(messages);
    const continueFinal = options.continueFinalMessage ?? false;
    if (continueFinal && options.addGenerationPrompt) {
      // vLLM rejects the pair with this text; the caller validates requests first, this guards engine misuse.
      throw new Error('continue_final_message and add_generation_prompt cannot both be true');
    }
    const vars: Record<string, unknown> = {
      ...options.extra,
      messages: msgs,
      tools: normalizeTools(options.tools),
      documents: options.documents ?? null,
      add_generation_prompt: options.addGenerationPrompt ?? false,
      continue_final_message: continueFinal,
      bos_token: this.options.bosToken ?? '',
      eos_token: this.options.eosToken ?? '',
    };
    const text = this.template.render(vars);
    if (!continueFinal || msgs.length === 0) return text;
    return cutAfterFinalMessage(text, contentText(msgs[msgs.length - 1].content));
  }

  /**
   * Free variables the template reads (jinja2's find_undeclared_variables, approximately): vLLM keeps only
   * `chat_template_kwargs` keys the template references (docs/contract.md §8.12).
   */
  referencedVariables(): Set<string> {
    if (this.referenced) return this.referenced;
    const used = new Set<string>();
    const declared = new Set<string>();
    const visit = (node: unknown, key: string | null): void => {
      if (Array.isArray(node)) {
        for (const n of node) visit(n, key);
        return;
      }
      if (!node || typeof node !== 'object') return;
      if (node instanceof Map) {
        for (const [k, v] of node) {
          visit(k, null);
          visit(v, null);
        }
        return;
      }
      const n = node as Record<string, unknown>;
      if (n.type === 'Identifier' && typeof n.value === 'string') {
        if (key !== null && NON_VARIABLE_KEYS.has(key)) declared.add(n.value);
        else used.add(n.value);
        return;
      }
      for (const [k, v] of Object.entries(n)) {
        if (n.type === 'MemberExpression' && k === 'property' && n.computed === false) continue;
        if ((n.type === 'FilterExpression' && k === 'filter') || (n.type === 'TestExpression' && k === 'test'))
          continue;
        visit(v, k);
      }
    };
    visit(this.template.parsed, null);
    for (const d of declared) used.delete(d);
    this.referenced = used;
    return used;
  }
}

/**
 * HF's continue_final_message: render the whole conversation, then cut the text right after the final
 * message's content, dropping the template's end-of-turn and anything after it. An empty final message is
 * cut at the end of its turn header instead: the text before the last end-of-turn marker.
 */
function cutAfterFinalMessage(text: string, finalContent: string): string {
  const needle = finalContent.trim() ? finalContent : '';
  if (needle) {
    const at = text.lastIndexOf(needle);
    if (at < 0) {
      const stripped = needle.trim();
      const at2 = text.lastIndexOf(stripped);
      if (at2 < 0) throw new Error('continue_final_message: the final message does not appear in the rendered text');
      return text.slice(0, at2 + stripped.length);
    }
    return text.slice(0, at + needle.length);
  }
  // Empty content: keep everything up to the last turn's closing marker, which ChatML-like templates put
  // right after the content.
  const end = text.lastIndexOf(IM_END);
  return end < 0 ? text.replace(/\s+$/, '') : text.slice(0, end);
}

export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';

/**
 * The built-in ChatML template (Qwen-2.5 style, hermes tool calls): tools are listed in the system turn,
 * assistant tool calls render as `<tool_call>{"name": …, "arguments": …}</tool_call>` (what the hermes parser
 * of docs/contract.md §8.12 reads back), tool results as role `tool`. No default system prompt: a byte-level model
 * with a 256-token context cannot afford one. `developer` is rendered as `system`.
 */
export const BUILTIN_CHAT_TEMPLATE = [
  '{%- set ns = namespace(start=0) -%}',
  "{%- if messages | length > 0 and (messages[0].role == 'system' or messages[0].role == 'developer') -%}",
  '{%- set ns.start = 1 -%}',
  '{%- endif -%}',
  '{%- if tools -%}',
  "{{- '<|im_start|>system\\n' -}}",
  '{%- if ns.start == 1 -%}{{- messages[0].content + "\\n\\n" -}}{%- endif -%}',
  '{{- "# Tools\\n<tools>" -}}',
  '{%- for tool in tools -%}{{- "\\n" + (tool | tojson) -}}{%- endfor -%}',
  '{{- "\\n</tools>\\nTo call a tool, reply with <tool_call>{\\"name\\": <name>, \\"arguments\\": <object>}</tool_call><|im_end|>\\n" -}}',
  '{%- elif ns.start == 1 -%}',
  "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' -}}",
  '{%- endif -%}',
  '{%- for message in messages -%}',
  '{%- if loop.index0 >= ns.start -%}',
  "{%- set role = 'system' if message.role == 'developer' else message.role -%}",
  "{%- if role == 'assistant' -%}",
  "{{- '<|im_start|>assistant\\n' + message.content -}}",
  '{%- if message.tool_calls -%}',
  '{%- for tc in message.tool_calls -%}',
  '{%- set call = tc.function if tc.function is defined else tc -%}',
  '{%- if message.content or not loop.first -%}{{- "\\n" -}}{%- endif -%}',
  '{{- \'<tool_call>{"name": \' + (call.name | tojson) + \', "arguments": \' -}}',
  '{%- if call.arguments is string -%}{{- call.arguments -}}{%- else -%}{{- call.arguments | tojson -}}{%- endif -%}',
  "{{- '}</tool_call>' -}}",
  '{%- endfor -%}',
  '{%- endif -%}',
  "{{- '<|im_end|>\\n' -}}",
  '{%- else -%}',
  "{{- '<|im_start|>' + role + '\\n' + message.content + '<|im_end|>\\n' -}}",
  '{%- endif -%}',
  '{%- endif -%}',
  '{%- endfor -%}',
  "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}",
].join('\n');

/** Token ids of one assistant turn as a sampler produced them (an RL Choice), with their old logprobs. */
export interface TurnTokens {
  ids: readonly number[];
  logprobs: readonly number[];
}

export interface TokenizeConversationOptions {
  tools?: readonly unknown[] | null;
  /** Which assistant messages carry loss (docs/contract.md §3.2 `assistant_turns`). */
  assistantTurns: 'all' | 'last';
  /** Leave the final message open (RL histories, docs/contract.md §5.2.3): no end-of-turn after it. */
  continueFinal?: boolean;
  /**
   * Exact tokens for some assistant messages, by message index (RL Choices, docs/contract.md §5.2.4): they replace
   * the re-tokenised text of that turn and carry their sampler logprobs.
   */
  turnTokens?: ReadonlyMap<number, TurnTokens>;
}

export interface TokenizedConversation {
  ids: number[];
  /** 1 exactly on the tokens of trained assistant turns: their content and closing end-of-turn token. */
  mask: number[];
  /** Old logprob per token where a TurnTokens supplied one, NaN elsewhere. */
  logprobs: number[];
}

/**
 * Tokenises a conversation for training. Turn boundaries come from rendering prefixes: the text before
 * assistant turn i is render(messages[:i], add_generation_prompt) and the text through it is
 * render(messages[:i+1]); each segment is tokenised on its own so no token straddles a boundary. The
 * trained part of a turn ends at its end-of-turn marker; whitespace the template puts after it is context.
 */
export function tokenizeConversation(
  tokenizer: Tokenizer,
  template: ChatTemplate,
  messages: readonly ChatMessage[],
  options: TokenizeConversationOptions,
): TokenizedConversation {
  const tools = options.tools ?? null;
  const continueFinal = options.continueFinal ?? false;
  const full = template.render(messages, { tools, continueFinalMessage: continueFinal });
  const assistantIdx = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  const trained = new Set(options.assistantTurns === 'last' ? assistantIdx.slice(-1) : assistantIdx);

  const out: TokenizedConversation = { ids: [], mask: [], logprobs: [] };
  const push = (text: string, m: number) => {
    for (const id of tokenizer.encode(text)) {
      out.ids.push(id);
      out.mask.push(m);
      out.logprobs.push(NaN);
    }
  };
  const imEnd = tokenizer.specialTokenId(IM_END);
  let pos = 0;
  for (const i of assistantIdx) {
    const isFinal = i === messages.length - 1;
    const before = template.render(messages.slice(0, i), { tools, addGenerationPrompt: true });
    const through = isFinal ? full : template.render(messages.slice(0, i + 1), { tools });
    if (!full.startsWith(before) || !full.startsWith(through) || before.length < pos) {
      throw new Error(`chat template is not prefix-stable at message ${i + 1}; cannot locate the assistant turn`);
    }
    push(full.slice(pos, before.length), 0);
    let turn = through.slice(before.length);
    // Template text after the turn's end-of-turn marker (a newline) is context, not a trained token.
    const endAt = turn.lastIndexOf(IM_END);
    let tail = '';
    if (endAt >= 0) {
      tail = turn.slice(endAt + IM_END.length);
      turn = turn.slice(0, endAt + IM_END.length);
    }
    const m = trained.has(i) ? 1 : 0;
    const given = options.turnTokens?.get(i);
    if (given) {
      if (given.ids.length !== given.logprobs.length) throw new Error('turn tokens and logprobs differ in length');
      given.ids.forEach((id, k) => {
        out.ids.push(id);
        out.mask.push(m);
        out.logprobs.push(given.logprobs[k]);
      });
      // A sampled turn usually ends with its own end-of-turn token; otherwise the template's closes it, as
      // untrained context (it has no sampler logprob).
      const closed = imEnd !== undefined && given.ids[given.ids.length - 1] === imEnd;
      if (endAt >= 0 && !closed) push(IM_END, 0);
    } else {
      push(turn, m);
    }
    push(tail, 0);
    pos = through.length;
  }
  push(full.slice(pos), 0);
  return out;
}
