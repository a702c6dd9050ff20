import { z } from 'zod';
import type { ApiError } from '@/lib/errors';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import {
  chatCompletionRequestSchema,
  structuredOutputsSchema,
  type ChatCompletionRequest,
  type ChatMessage,
  type StructuredOutputKind,
  type StructuredOutputs,
} from '@/lib/schemas/chat';
import { engineError, requestError } from './chat-errors';
import { PySet, pyFloat, pyInt, pyRepr, pyStr, pyTruthy } from './python-repr';

/*
 * Validation of POST /v1/chat/completions in vLLM's order (compat §7.2), split where the route has work to do:
 *
 *   parseChatRequest(body)            (1) request validators, then the schema          → 400 Bad Request
 *   parseModelName(req.model) + DB    (2) model                                         → 400 / 404
 *   checkTemplateRequest(req)             chat_template refusal, chat_template_kwargs    → 400 BadRequestError
 *   render the template, count tokens (3) template errors: chatTemplateError(text)      → 400 BadRequestError
 *   resolveSamplingRequest(req, ctx)  (3) context, (4) sampling, (5) greedy, (6) engine  → 400 BadRequestError
 *
 * Every message is vLLM's bare validator text with Python number formatting; the first failure wins.
 */

export type ChatRequest = ChatCompletionRequest;

// ---- phase 1 -----------------------------------------------------------------------------------------

/** A JSON number as Python compares it (bool is an int there); anything else skips the numeric validator. */
function pyNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * vLLM's `@model_validator(mode="before")` checks, in the order §7.2 lists them. They run on the raw body
 * before field validation, so they see values as sent and use Python truthiness (`{}` stream_options
 * passes, `top_logprobs: 0` is skipped). A value of the wrong type is left to the schema.
 */
function runRequestValidators(raw: Record<string, unknown>): void {
  if (pyTruthy(raw.stream_options) && !pyTruthy(raw.stream)) {
    throw requestError('Stream options can only be defined when `stream=True`.', 'stream_options');
  }

  const promptLogprobs = pyNumber(raw.prompt_logprobs);
  if (promptLogprobs !== undefined) {
    if (pyTruthy(raw.stream) && (promptLogprobs > 0 || promptLogprobs === -1)) {
      throw requestError('`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs');
    }
    if (promptLogprobs < 0 && promptLogprobs !== -1) {
      throw requestError('`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs');
    }
  }
  const topLogprobs = pyNumber(raw.top_logprobs);
  if (topLogprobs !== undefined && topLogprobs !== 0) {
    if (topLogprobs < 0 && topLogprobs !== -1) {
      throw requestError('`top_logprobs` must be a positive value or -1.', 'top_logprobs');
    }
    if ((topLogprobs === -1 || topLogprobs > 0) && !pyTruthy(raw.logprobs)) {
      throw requestError('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    }
  }

  const so = raw.structured_outputs;
  if (isPlainObject(so)) {
    const count = (['json', 'regex', 'choice'] as const).filter((k) => so[k] !== undefined && so[k] !== null).length;
    if (count > 1) {
      throw requestError(
        "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
        'structured_outputs',
      );
    }
  }

  // §7.12: absent tool_choice (parse tool calls when tools are given), null and "none" pass; vLLM's
  // auto/required/named choices are refused with its wording, adapted.
  const toolChoice = raw.tool_choice;
  if (toolChoice !== undefined && toolChoice !== null && toolChoice !== 'none') {
    if (raw.tools === undefined || raw.tools === null) {
      throw requestError('When using `tool_choice`, `tools` must be set.', 'tool_choice');
    }
    throw requestError(
      `Invalid value for \`tool_choice\`: ${pyStr(toolChoice)}! Only "none" is supported.`,
      'tool_choice',
    );
  }

  // add_generation_prompt defaults to true, so continue_final_message alone fails (§7.1).
  const addGenerationPrompt = 'add_generation_prompt' in raw ? raw.add_generation_prompt : true;
  if (pyTruthy(raw.continue_final_message) && pyTruthy(addGenerationPrompt)) {
    throw requestError(
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
      'continue_final_message',
    );
  }

  const salt = raw.cache_salt;
  if (salt !== undefined && salt !== null && (typeof salt !== 'string' || salt === '')) {
    throw requestError("Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt');
  }
}

const STRUCTURED_DUMP_KEYS = [
  'json',
  'regex',
  'choice',
  'grammar',
  'json_object',
  'disable_fallback',
  'disable_any_whitespace',
  'disable_additional_properties',
  'whitespace_pattern',
  'structural_tag',
  '_backend',
  '_backend_was_auto',
] as const;

function setKinds(so: StructuredOutputs): StructuredOutputKind[] {
  return (['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const).filter(
    (k) => so[k] !== undefined && so[k] !== null,
  );
}

/** `StructuredOutputsParams.__post_init__`: more than one of the six kinds, with the dataclass `__dict__` dump. */
function structuredOutputKindsError(so: StructuredOutputs): ApiError | null {
  if (setKinds(so).length <= 1) return null;
  const dump = new Map<string, unknown>();
  for (const key of STRUCTURED_DUMP_KEYS) {
    // _backend is init=False in vLLM: whatever the client sent, the dataclass holds its default.
    dump.set(key, key === '_backend' ? null : key === '_backend_was_auto' ? false : (so[key] ?? null));
  }
  return requestError(
    `You can only use one kind of structured outputs constraint but multiple are specified: ${pyRepr(dump)}`,
    'structured_outputs',
  );
}

const FIELD_ORDER = Object.keys(chatCompletionRequestSchema.shape);

function schemaError(error: z.ZodError): never {
  const issue = error.issues[0];
  const param = typeof issue.path[0] === 'string' ? issue.path[0] : null;
  // Our pydantic-style primitives and refinements carry their final text; zod's own issues are translated.
  const message =
    issue.code === 'custom'
      ? issue.message
      : (zodIssuesToValidation(new z.ZodError([issue]), 'body')[0]?.msg ?? issue.message);
  throw requestError(message, param);
}

/**
 * Phase 1 (§7.2 order item 1): vLLM's request validators on the raw body, then the schema. Needs no model.
 * Throws 400 `Bad Request`. The result is the parsed body with unknown keys dropped and plain defaults set.
 */
export function parseChatRequest(rawJsonBody: unknown): ChatRequest {
  if (!isPlainObject(rawJsonBody)) {
    throw requestError('Input should be a valid dictionary or object to extract fields from', null);
  }
  runRequestValidators(rawJsonBody);
  const parsed = chatCompletionRequestSchema.safeParse(rawJsonBody, { reportInput: true });
  // vLLM's dataclass raises while its field is validated, so the error takes that field's place among the
  // schema errors (pydantic reports fields in declaration order; the schema keeps vLLM's order).
  const so = structuredOutputsSchema.safeParse(rawJsonBody.structured_outputs);
  const kindsError = so.success && so.data ? structuredOutputKindsError(so.data) : null;
  if (!parsed.success) {
    const first = parsed.error.issues[0]?.path[0];
    const before = typeof first === 'string' && FIELD_ORDER.indexOf(first) < FIELD_ORDER.indexOf('structured_outputs');
    if (kindsError && !before) throw kindsError;
    schemaError(parsed.error);
  }
  if (kindsError) throw kindsError;
  return parsed.data;
}

// ---- template inputs -----------------------------------------------------------------------------------

export const UNTRUSTED_TEMPLATE_MESSAGE =
  'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.';

/** A tool as the template sees it: vLLM's `model_dump()`, unset keys as null (§7.12). */
export interface TemplateTool {
  type: 'function';
  function: { name: string; description: string | null; parameters: Record<string, unknown> | null };
}

/** What the chat template renders with (§7.12). */
export interface TemplateInputs {
  messages: ChatMessage[];
  tools: TemplateTool[] | null;
  documents: Record<string, string>[] | null;
  add_generation_prompt: boolean;
  continue_final_message: boolean;
  add_special_tokens: boolean;
  reasoning_effort: 'low' | 'medium' | 'high' | null;
  /**
   * Extra template variables from `chat_template_kwargs`, minus the names the request fields supply (they
   * win, v0.12+ precedence). The renderer still keeps only keys its template references (§7.12).
   */
  chat_template_kwargs: Record<string, unknown>;
}

const TEMPLATE_CALL_NAMES = new Set([
  'messages',
  'conversation',
  'tools',
  'documents',
  'add_generation_prompt',
  'continue_final_message',
  'reasoning_effort',
]);

/**
 * After model resolution, before rendering: vLLM refuses request templates (no
 * --trust-request-chat-template) and the kwargs `chat_template` / `tokenize`. Throws 400 BadRequestError.
 */
export function checkTemplateRequest(req: ChatRequest): TemplateInputs {
  const kwargs = req.chat_template_kwargs ?? {};
  if (req.chat_template != null) throw engineError(UNTRUSTED_TEMPLATE_MESSAGE, 'chat_template');
  if (kwargs.chat_template != null) throw engineError(UNTRUSTED_TEMPLATE_MESSAGE, 'chat_template_kwargs');
  const unexpected = ['chat_template', 'tokenize'].filter((k) => k in kwargs);
  if (unexpected.length) {
    throw engineError(
      `Found unexpected chat template kwargs from request: ${pyRepr(new PySet(unexpected))}`,
      'chat_template_kwargs',
    );
  }
  return {
    messages: req.messages,
    tools:
      req.tools?.map((t) => ({
        type: 'function' as const,
        function: {
          name: t.function.name,
          description: t.function.description ?? null,
          parameters: t.function.parameters ?? null,
        },
      })) ?? null,
    documents: req.documents ?? null,
    add_generation_prompt: req.add_generation_prompt,
    continue_final_message: req.continue_final_message,
    add_special_tokens: req.add_special_tokens,
    reasoning_effort: req.reasoning_effort ?? null,
    chat_template_kwargs: Object.fromEntries(Object.entries(kwargs).filter(([k]) => !TEMPLATE_CALL_NAMES.has(k))),
  };
}

// ---- phase 2 -----------------------------------------------------------------------------------------

/** The model's `generation_config.json` defaults (§7.3) and extra EOS ids (§7.5). */
export interface GenerationDefaults {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  /** Caps `max_tokens`, the client's value included (v0.11, §7.10). */
  max_new_tokens?: number | null;
  /** `eos_token_id` of the generation config: ids other than the tokenizer's EOS join `stop_token_ids`. */
  eos_token_id?: number | readonly number[] | null;
}

export interface SamplingContext {
  vocabSize: number;
  /** Context length L. */
  maxModelLen: number;
  /** Length of the templated, tokenised prompt before `truncate_prompt_tokens` is applied. */
  promptTokenCount: number;
  /** vLLM's `max_logprobs` (compat §8 item 41: 20). */
  maxLogprobs?: number;
  generationConfig?: GenerationDefaults | null;
  /** The tokenizer's primary EOS id (handled by `ignore_eos`, never listed in `stop_token_ids`). */
  eosTokenId?: number | null;
  /** An `X-Request-Id` header; it wins over the body's `request_id` for the response id. */
  headerRequestId?: string | null;
  /** True when an upstream vLLM serves the model: `grammar` and `structural_tag` are then passed on (§7.11). */
  upstream?: boolean;
  /** Source of random request ids (tests). */
  randomHex?: () => string;
}

export type StructuredOutputConstraint =
  /** The schema as an object; a `json` string that is not valid JSON is kept as the string for the compiler to reject. */
  | { kind: 'json'; schema: unknown }
  | { kind: 'json_object' }
  | { kind: 'regex'; pattern: string }
  | { kind: 'choice'; choices: string[] }
  | { kind: 'grammar'; grammar: string }
  | { kind: 'structural_tag'; tag: string };

export interface StructuredOutputSpec {
  constraint: StructuredOutputConstraint;
  disable_any_whitespace: boolean;
  disable_additional_properties: boolean;
  whitespace_pattern: string | null;
  disable_fallback: boolean;
}

/**
 * Everything the engine and the response builders need, every default resolved (field names follow
 * vLLM's SamplingParams so they can be checked against the spec line by line).
 */
export interface SamplingRequest extends TemplateInputs {
  /** Base request id: `X-Request-Id`, else the body's `request_id`, else 32 random hex digits. Send as `x-request-id`. */
  request_id: string;
  /** `chatcmpl-{request_id}`: the response and chunk `id`. */
  response_id: string;
  /** The `model` string exactly as sent; echoed in every response (§6). */
  model: string;
  stream: boolean;
  /** Usage chunk at the end of a stream (§7.14). */
  include_usage: boolean;
  /** `usage` on every chunk (only together with include_usage). */
  continuous_usage_stats: boolean;

  n: number;
  /** After the 0 < t < 0.01 → 0.01 clamp. */
  temperature: number;
  /** t < 1e-5: argmax; top_p/top_k/min_p are then 1/0/0 (§7.4 step 7). */
  greedy: boolean;
  top_p: number;
  /** 0 = off (−1 is normalised to 0). */
  top_k: number;
  min_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  repetition_penalty: number;
  /** Token id → bias in [−100, 100]; null when none. */
  logit_bias: ReadonlyMap<number, number> | null;
  /** null = unseeded (absent or −1); choice i uses seed + i (§7.6). */
  seed: bigint | null;
  stop: string[];
  /** The client's ids (deduplicated, order kept) plus the generation config's extra EOS ids unless ignore_eos. */
  stop_token_ids: number[];
  include_stop_str_in_output: boolean;
  ignore_eos: boolean;
  min_tokens: number;
  max_tokens: number;
  /** null = none, else keep the last k prompt tokens (−1 already resolved to maxModelLen). */
  truncate_prompt_tokens: number | null;
  /** Prompt length after truncation: `usage.prompt_tokens`. */
  prompt_tokens: number;
  skip_special_tokens: boolean;
  spaces_between_special_tokens: boolean;
  bad_words: string[];
  allowed_token_ids: number[] | null;
  structured_output: StructuredOutputSpec | null;

  /** Always true: validated as sent, then forced (§7.8). */
  logprobs: true;
  /** Candidates per generated token (−1 resolved to the vocabulary size). */
  top_logprobs: number;
  /** Prompt logprobs per prompt token, or null for none (echo falls back to top_logprobs, §7.7). */
  prompt_logprobs: number | null;
  return_tokens_as_token_ids: boolean;
  return_token_ids: boolean;

  echo: boolean;
  /** `assistant`, or the last message's role when add_generation_prompt is off (§7.7). */
  response_role: string;
  /** What echo prepends: the last message's content when its role is response_role, else ''. */
  echo_text: string;

  tool_choice: 'none' | null;
  /** tools non-empty and tool_choice absent: parse hermes `<tool_call>` blocks (§7.12). */
  parse_tool_calls: boolean;
  parallel_tool_calls: boolean;
  include_reasoning: boolean;
  priority: number;
  cache_salt: string | null;
  kv_transfer_params: Record<string, unknown> | null;
  engine_xargs: Record<string, unknown> | null;
}

const MAX_N = 128;
const DEFAULT_MAX_LOGPROBS = 20;
/** vLLM's _MAX_TEMP: smaller positive temperatures overflow, so they are raised to it. */
const MIN_POSITIVE_TEMPERATURE = 0.01;
/** vLLM's _SAMPLING_EPS: below it sampling is greedy. */
const GREEDY_EPS = 1e-5;

function randomHex32(): string {
  return globalThis.crypto.randomUUID().replace(/-/g, '');
}

/** Python's `int(str)`: optional sign and surrounding whitespace, `_` between digits. */
function pythonIntKey(key: string): number | null {
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(key);
  if (!m) return null;
  return Number(`${m[1]}${m[2].replace(/_/g, '')}`);
}

function outOfVocab(ids: Iterable<number>, vocabSize: number): number[] {
  return [...ids].filter((id) => id < 0 || id >= vocabSize);
}

function textOf(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');
}

type StructuredSource = 'structured_outputs' | 'response_format';

function resolveStructuredOutput(req: ChatRequest): { spec: StructuredOutputSpec; source: StructuredSource } | null {
  const so = req.structured_outputs;
  const fields = new Map<StructuredOutputKind, { value: unknown; source: StructuredSource }>();
  if (so) for (const k of setKinds(so)) fields.set(k, { value: so[k], source: 'structured_outputs' });
  // §7.11: response_format overrides the same key of structured_outputs; `text` maps to nothing.
  const rf = req.response_format;
  if (rf?.type === 'json_object') fields.set('json_object', { value: true, source: 'response_format' });
  else if (rf?.type === 'json_schema' && rf.json_schema?.schema != null) {
    fields.set('json', { value: rf.json_schema.schema, source: 'response_format' });
  } else if (rf?.type === 'structural_tag') {
    fields.set('structural_tag', { value: JSON.stringify(rf), source: 'response_format' });
  }

  // When the mapping leaves several kinds set, vLLM uses the first present in this order
  // (get_structured_output_key); json_object:false constrains nothing.
  const pick = (kind: StructuredOutputKind) => fields.get(kind);
  let chosen: { constraint: StructuredOutputConstraint; source: StructuredSource } | null = null;
  const json = pick('json');
  const jsonObject = pick('json_object');
  const regex = pick('regex');
  const choice = pick('choice');
  const grammar = pick('grammar');
  const tag = pick('structural_tag');
  if (json) {
    let schema: unknown = json.value;
    if (typeof schema === 'string') {
      try {
        schema = JSON.parse(schema);
      } catch {
        // kept as the string: the compiler reports it (§7.2 item 6)
      }
    }
    chosen = { constraint: { kind: 'json', schema }, source: json.source };
  } else if (jsonObject && jsonObject.value === true) {
    chosen = { constraint: { kind: 'json_object' }, source: jsonObject.source };
  } else if (regex) chosen = { constraint: { kind: 'regex', pattern: regex.value as string }, source: regex.source };
  else if (choice)
    chosen = { constraint: { kind: 'choice', choices: choice.value as string[] }, source: choice.source };
  else if (grammar) {
    chosen = { constraint: { kind: 'grammar', grammar: grammar.value as string }, source: grammar.source };
  } else if (tag) chosen = { constraint: { kind: 'structural_tag', tag: tag.value as string }, source: tag.source };
  if (!chosen) return null;
  return {
    source: chosen.source,
    spec: {
      constraint: chosen.constraint,
      disable_any_whitespace: so?.disable_any_whitespace ?? false,
      disable_additional_properties: so?.disable_additional_properties ?? false,
      whitespace_pattern: so?.whitespace_pattern ?? null,
      disable_fallback: so?.disable_fallback ?? false,
    },
  };
}

/**
 * Phase 2 (§7.2 order items 3–6), after the model is resolved and the template rendered: context length,
 * sampling parameters in SamplingParams' order, greedy with n > 1, then the engine's checks. Throws 400
 * BadRequestError; returns the fully defaulted request.
 */
export function resolveSamplingRequest(req: ChatRequest, ctx: SamplingContext): SamplingRequest {
  const template = checkTemplateRequest(req);
  const L = ctx.maxModelLen;
  const V = ctx.vocabSize;
  const gen = ctx.generationConfig ?? {};
  const maxLogprobs = ctx.maxLogprobs ?? DEFAULT_MAX_LOGPROBS;

  // (3) truncation size, then the context checks of §7.10 on the truncated prompt.
  let truncate: number | null = req.truncate_prompt_tokens ?? null;
  if (truncate !== null && truncate <= -1) truncate = L;
  if (truncate !== null && truncate > L) {
    throw engineError(
      `truncate_prompt_tokens value (${pyInt(truncate)}) is greater than max_model_len (${pyInt(L)}). Please, select a smaller truncation size.`,
      'truncate_prompt_tokens',
    );
  }
  const promptTokens = truncate !== null ? Math.min(ctx.promptTokenCount, truncate) : ctx.promptTokenCount;
  if (promptTokens >= L) {
    throw engineError(
      `This model's maximum context length is ${pyInt(L)} tokens. However, your request has ${pyInt(promptTokens)} input tokens. Please reduce the length of the input messages.`,
      'messages',
    );
  }
  // The first non-null of max_completion_tokens and max_tokens (§7.1).
  const maxTokensParam = req.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const requestedMax = req.max_completion_tokens ?? req.max_tokens ?? null;
  if (requestedMax !== null && promptTokens + requestedMax > L) {
    throw engineError(
      `'max_tokens' or 'max_completion_tokens' is too large: ${pyInt(requestedMax)}. This model's maximum context length is ${pyInt(L)} tokens and your request has ${pyInt(promptTokens)} input tokens (${pyInt(requestedMax)} > ${pyInt(L)} - ${pyInt(promptTokens)}).`,
      maxTokensParam,
    );
  }

  // (4) sampling parameters. Beam search would replace them entirely, so it is refused first.
  if (req.use_beam_search) throw engineError('Beam search is not supported by this server.', 'use_beam_search');

  // SamplingParams.from_optional converts logit_bias keys before the parameters are checked.
  let logitBias: Map<number, number> | null = null;
  if (req.logit_bias) {
    const keys = Object.keys(req.logit_bias);
    const bad = keys.filter((k) => pythonIntKey(k) === null);
    if (bad.length) {
      throw engineError(
        `logit_bias contains key(s) that cannot be converted to integer token IDs: ${pyRepr(bad)}`,
        'logit_bias',
      );
    }
    logitBias = new Map();
    for (const [k, bias] of Object.entries(req.logit_bias)) {
      logitBias.set(pythonIntKey(k) as number, Math.min(100, Math.max(-100, bias)));
    }
  }

  const n = req.n ?? 1;
  const presence = req.presence_penalty ?? gen.presence_penalty ?? 0;
  const frequency = req.frequency_penalty ?? gen.frequency_penalty ?? 0;
  const repetition = req.repetition_penalty ?? gen.repetition_penalty ?? 1;
  let temperature = req.temperature ?? gen.temperature ?? 1;
  if (temperature > 0 && temperature < MIN_POSITIVE_TEMPERATURE) temperature = MIN_POSITIVE_TEMPERATURE;
  let topP = req.top_p ?? gen.top_p ?? 1;
  let topK = req.top_k ?? gen.top_k ?? 0;
  let minP = req.min_p ?? gen.min_p ?? 0;
  const minTokens = req.min_tokens;
  // vLLM's get_max_tokens: the smallest of the remaining context, the client's value and max_new_tokens.
  const maxTokens = Math.min(
    L - promptTokens,
    ...(requestedMax !== null ? [requestedMax] : []),
    ...(gen.max_new_tokens != null ? [gen.max_new_tokens] : []),
  );
  const stop = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;

  if (n < 1) throw engineError(`n must be at least 1, got ${pyInt(n)}.`, 'n');
  if (n > MAX_N) throw engineError(`n must be at most ${MAX_N}, got ${pyInt(n)}.`, 'n');
  if (!(presence >= -2 && presence <= 2)) {
    throw engineError(`presence_penalty must be in [-2, 2], got ${pyFloat(presence)}.`, 'presence_penalty');
  }
  if (!(frequency >= -2 && frequency <= 2)) {
    throw engineError(`frequency_penalty must be in [-2, 2], got ${pyFloat(frequency)}.`, 'frequency_penalty');
  }
  if (repetition <= 0) {
    throw engineError(
      `repetition_penalty must be greater than zero, got ${pyFloat(repetition)}.`,
      'repetition_penalty',
    );
  }
  if (temperature < 0)
    throw engineError(`temperature must be non-negative, got ${pyFloat(temperature)}.`, 'temperature');
  if (!(topP > 0 && topP <= 1)) throw engineError(`top_p must be in (0, 1], got ${pyFloat(topP)}.`, 'top_p');
  if (topK < -1) throw engineError(`top_k must be 0 (disable), or at least 1, got ${pyInt(topK)}.`, 'top_k');
  if (!(minP >= 0 && minP <= 1)) throw engineError(`min_p must be in [0, 1], got ${pyFloat(minP)}.`, 'min_p');
  if (maxTokens < 1) throw engineError(`max_tokens must be at least 1, got ${pyInt(maxTokens)}.`, maxTokensParam);
  if (minTokens < 0) {
    throw engineError(`min_tokens must be greater than or equal to 0, got ${pyInt(minTokens)}.`, 'min_tokens');
  }
  if (minTokens > maxTokens) {
    throw engineError(
      `min_tokens must be less than or equal to max_tokens=${pyInt(maxTokens)}, got ${pyInt(minTokens)}.`,
      'min_tokens',
    );
  }
  // SamplingParams' logprobs / prompt_logprobs range checks cannot fail here: phase 1 refused every such
  // value. truncate_prompt_tokens 0 is not in the reference; SamplingParams rejects it at this point.
  if (truncate === 0) {
    throw engineError('truncate_prompt_tokens must be an integer >= 1 or -1, got 0', 'truncate_prompt_tokens');
  }
  if (stop.some((s) => s === '')) throw engineError('stop cannot contain an empty string.', 'stop');
  if (req.bad_words.some((w) => w === '')) {
    throw engineError(`bad_words cannot contain an empty string. Got bad_words=${pyRepr(req.bad_words)}`, 'bad_words');
  }

  // (5)
  const greedy = temperature < GREEDY_EPS;
  if (greedy && n > 1) throw engineError(`n must be 1 when using greedy sampling, got ${pyInt(n)}.`, 'n');
  if (greedy) {
    topP = 1;
    topK = 0;
    minP = 0;
  }
  if (topK === -1) topK = 0;

  // (6) engine checks. Logprobs are validated as sent (logprobs false means no sample logprobs were
  // asked for); −1 means the whole vocabulary.
  const topLogprobsSent = req.top_logprobs ?? 0;
  const sampleLogprobs = req.logprobs ? (topLogprobsSent === -1 ? V : topLogprobsSent) : 0;
  if (sampleLogprobs > maxLogprobs) {
    throw engineError(
      `Requested sample logprobs of ${pyInt(sampleLogprobs)}, which is greater than max allowed: ${pyInt(maxLogprobs)}`,
      'top_logprobs',
    );
  }
  // §7.7: with echo an unset prompt_logprobs takes top_logprobs.
  // An explicit `top_logprobs: null` stays None in vLLM, the absent field is its default 0.
  let promptLogprobs =
    req.prompt_logprobs ?? (req.echo ? (req.top_logprobs === undefined ? 0 : req.top_logprobs) : null);
  if (promptLogprobs === -1) promptLogprobs = V;
  if (promptLogprobs !== null && promptLogprobs > maxLogprobs) {
    throw engineError(
      `Requested prompt logprobs of ${pyInt(promptLogprobs)}, which is greater than max allowed: ${pyInt(maxLogprobs)}`,
      'prompt_logprobs',
    );
  }
  if (logitBias) {
    const bad = outOfVocab(logitBias.keys(), V);
    if (bad.length) {
      throw engineError(
        `token_id(s) ${pyRepr(bad)} in logit_bias contain out-of-vocab token ids. Vocabulary size: ${pyInt(V)}`,
        'logit_bias',
      );
    }
  }
  const clientStopIds = [...new Set(req.stop_token_ids ?? [])];
  {
    const bad = outOfVocab(clientStopIds, V);
    if (bad.length) {
      throw engineError(
        `token_id(s) ${pyRepr(bad)} in stop_token_ids contain out-of-vocab token ids. Vocabulary size: ${pyInt(V)}`,
        'stop_token_ids',
      );
    }
  }
  const allowed = req.allowed_token_ids ?? null;
  if (allowed !== null) {
    if (allowed.length === 0) throw engineError('allowed_token_ids is not None and empty!', 'allowed_token_ids');
    if (outOfVocab(allowed, V).length) {
      throw engineError('allowed_token_ids contains out-of-vocab token id!', 'allowed_token_ids');
    }
  }
  const structured = resolveStructuredOutput(req);
  if (structured) {
    const c = structured.spec.constraint;
    if (c.kind === 'choice' && c.choices.length === 0) {
      throw engineError("Choice '[]' cannot be an empty list", structured.source);
    }
    if ((c.kind === 'grammar' || c.kind === 'structural_tag') && !ctx.upstream) {
      throw engineError(`structured_outputs.${c.kind} is not supported by this server.`, structured.source);
    }
  }
  if (req.priority !== 0) {
    throw engineError(`Got priority ${pyInt(req.priority)} but Priority scheduling is not enabled.`, 'priority');
  }
  if (req.logits_processors && req.logits_processors.length > 0) {
    throw engineError(
      'The `logits_processors` argument is not supported by this server. See --logits-processor-pattern engine argument for more information.',
      'logits_processors',
    );
  }

  // Generation-config EOS ids stop with a numeric stop_reason unless ignore_eos (§7.5).
  const stopTokenIds = [...clientStopIds];
  if (!req.ignore_eos && gen.eos_token_id != null) {
    const extra = typeof gen.eos_token_id === 'number' ? [gen.eos_token_id] : [...gen.eos_token_id];
    for (const id of extra) if (id !== ctx.eosTokenId && !stopTokenIds.includes(id)) stopTokenIds.push(id);
  }

  const lastMessage = req.messages.at(-1);
  const responseRole = req.add_generation_prompt ? 'assistant' : (lastMessage?.role ?? 'assistant');
  const echoText = req.echo && lastMessage && lastMessage.role === responseRole ? textOf(lastMessage.content) : '';

  const baseRequestId = ctx.headerRequestId || req.request_id || (ctx.randomHex ?? randomHex32)();
  const stream = req.stream === true;
  const includeUsage = stream && req.stream_options != null && req.stream_options.include_usage === true;
  let seed: bigint | null = null;
  if (req.seed != null && req.seed !== -1) {
    const big = BigInt(req.seed);
    // 2^63 can only be 2^63−1 rounded by JSON decoding.
    seed = big > 2n ** 63n - 1n ? 2n ** 63n - 1n : big;
  }

  return {
    ...template,
    request_id: baseRequestId,
    response_id: `chatcmpl-${baseRequestId}`,
    model: req.model ?? '',
    stream,
    include_usage: includeUsage,
    continuous_usage_stats: includeUsage && req.stream_options?.continuous_usage_stats === true,
    n,
    temperature,
    greedy,
    top_p: topP,
    top_k: topK,
    min_p: minP,
    presence_penalty: presence,
    frequency_penalty: frequency,
    repetition_penalty: repetition,
    logit_bias: logitBias,
    seed,
    stop: [...stop],
    stop_token_ids: stopTokenIds,
    include_stop_str_in_output: req.include_stop_str_in_output,
    ignore_eos: req.ignore_eos,
    min_tokens: minTokens,
    max_tokens: maxTokens,
    truncate_prompt_tokens: truncate,
    prompt_tokens: promptTokens,
    skip_special_tokens: req.skip_special_tokens,
    spaces_between_special_tokens: req.spaces_between_special_tokens,
    bad_words: [...req.bad_words],
    allowed_token_ids: allowed ? [...allowed] : null,
    structured_output: structured?.spec ?? null,
    logprobs: true,
    top_logprobs: topLogprobsSent === -1 ? V : topLogprobsSent,
    prompt_logprobs: promptLogprobs,
    return_tokens_as_token_ids: req.return_tokens_as_token_ids ?? true,
    return_token_ids: req.return_token_ids ?? false,
    echo: req.echo,
    response_role: responseRole,
    echo_text: echoText,
    tool_choice: req.tool_choice ?? null,
    parse_tool_calls: (req.tools?.length ?? 0) > 0 && req.tool_choice == null,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    include_reasoning: req.include_reasoning,
    priority: req.priority,
    cache_salt: req.cache_salt ?? null,
    kv_transfer_params: req.kv_transfer_params ?? null,
    engine_xargs: req.engine_xargs ?? req.vllm_xargs ?? null,
  };
}

/** The prompt ids the engine sees: the last `truncate_prompt_tokens` of the templated prompt (§7.10). */
export function truncatePrompt<T>(
  promptTokenIds: readonly T[],
  sampling: Pick<SamplingRequest, 'truncate_prompt_tokens'>,
): T[] {
  const k = sampling.truncate_prompt_tokens;
  return k !== null && promptTokenIds.length > k
    ? promptTokenIds.slice(promptTokenIds.length - k)
    : [...promptTokenIds];
}

/**
 * Everything at once, for callers that already know the prompt length (tests, upstream proxying):
 * phase 1, then the template checks and phase 2. The model lookup is not part of it.
 */
export function validateChatRequest(
  rawJsonBody: unknown,
  ctx: Omit<SamplingContext, 'promptTokenCount'> & { promptTokenCount?: number },
): SamplingRequest {
  const req = parseChatRequest(rawJsonBody);
  return resolveSamplingRequest(req, { ...ctx, promptTokenCount: ctx.promptTokenCount ?? 0 });
}
