import type { ChatMessage } from '@/lib/schemas/chat';
import { engineError } from '../chat-errors';
import { pyFloat, pyInt, pyRepr } from '../python-repr';
import type { ChatRequest } from './request-checks';
import { resolveStructuredOutput, type StructuredOutputSpec } from './structured-output';
import { checkTemplateRequest, type TemplateInputs } from './template-inputs';

/** Phase 2 of the chat-request checks (see index.ts): context, sampling parameters, greedy, engine checks. */

/** The model's `generation_config.json` defaults (docs/contract.md §8.3) and extra EOS ids (§8.5). */
export interface GenerationDefaults {
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  /** Caps `max_tokens`, the client's value included (v0.11, docs/contract.md §8.10). */
  max_new_tokens?: number | null;
  /** `eos_token_id` of the generation config: ids other than the tokenizer's EOS join `stop_token_ids`. */
  eos_token_id?: number | readonly number[] | null;
}

/**
 * What the serving side knows about the model and its settings. The limits and defaults are required, not optional:
 * an option only tests passed once hid that production never set TUNEBOARD_MAX_LOGPROBS nor a model's
 * generation_config.json defaults.
 */
export interface SamplingContext {
  vocabSize: number;
  /** Context length L. */
  maxModelLen: number;
  /** Length of the templated, tokenised prompt before `truncate_prompt_tokens` is applied. */
  promptTokenCount: number;
  /** vLLM's `--max-logprobs` (docs/contract.md §9 item 41: 20); TUNEBOARD_MAX_LOGPROBS. */
  maxLogprobs: number;
  /** The model's generation_config.json sampling defaults (generationDefaults), null when it has none. */
  generationConfig: GenerationDefaults | null;
  /** The tokenizer's primary EOS id (handled by `ignore_eos`, never listed in `stop_token_ids`). */
  eosTokenId?: number | null;
  /** An `X-Request-Id` header; it wins over the body's `request_id` for the response id. */
  headerRequestId?: string | null;
}

/**
 * transformers' GenerationConfig defaults: vLLM (`--generation-config auto`, its default) reads a model's
 * generation_config.json through `to_diff_dict()`, so a value equal to these is not a default it applies (a file's
 * `top_k: 50` leaves vLLM's top_k off).
 */
const HF_GENERATION_DEFAULTS: Record<string, number> = { temperature: 1, top_k: 50, top_p: 1, repetition_penalty: 1 };
/** The generation_config.json keys vLLM takes as sampling defaults (ModelConfig.get_diff_sampling_param). */
const GENERATION_KEYS = ['repetition_penalty', 'temperature', 'top_k', 'top_p', 'min_p', 'max_new_tokens'] as const;

/**
 * The sampling defaults a model's generation_config.json gives what a request leaves unset (docs/contract.md §8.3),
 * as vLLM reads them: only those keys, only numbers, only values other than transformers' own defaults. EOS ids are
 * not among them (the backend adds them to the stop ids itself). Null when the file gives none.
 */
export function generationDefaults(file: unknown): GenerationDefaults | null {
  if (!file || typeof file !== 'object') return null;
  const out: Record<string, number> = {};
  for (const key of GENERATION_KEYS) {
    const value = (file as Record<string, unknown>)[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value === HF_GENERATION_DEFAULTS[key]) continue;
    out[key] = value;
  }
  return Object.keys(out).length > 0 ? (out as GenerationDefaults) : null;
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
  /** The `model` string exactly as sent; echoed in every response (docs/contract.md §7). */
  model: string;
  stream: boolean;
  /** Usage chunk at the end of a stream (docs/contract.md §8.14). */
  include_usage: boolean;
  /** `usage` on every chunk (only together with include_usage). */
  continuous_usage_stats: boolean;

  n: number;
  /** After the 0 < t < 0.01 → 0.01 clamp. */
  temperature: number;
  /** t < 1e-5: argmax; top_p/top_k/min_p are then 1/0/0 (docs/contract.md §8.4 step 7). */
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
  /** null = unseeded (absent or −1); choice i uses seed + i (docs/contract.md §8.6). */
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

  /** Always true: validated as sent, then forced (docs/contract.md §8.8). */
  logprobs: true;
  /** Candidates per generated token (−1 resolved to the vocabulary size). */
  top_logprobs: number;
  /** Prompt logprobs per prompt token, or null for none (echo falls back to top_logprobs, docs/contract.md §8.7). */
  prompt_logprobs: number | null;
  return_tokens_as_token_ids: boolean;
  return_token_ids: boolean;

  echo: boolean;
  /** `assistant`, or the last message's role when add_generation_prompt is off (docs/contract.md §8.7). */
  response_role: string;
  /** What echo prepends: the last message's content when its role is response_role, else ''. */
  echo_text: string;

  tool_choice: 'none' | null;
  /** tools non-empty and tool_choice absent: parse hermes `<tool_call>` blocks (docs/contract.md §8.12). */
  parse_tool_calls: boolean;
  parallel_tool_calls: boolean;
  include_reasoning: boolean;
  priority: number;
  cache_salt: string | null;
  kv_transfer_params: Record<string, unknown> | null;
  engine_xargs: Record<string, unknown> | null;
}

const MAX_N = 128;
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

/**
 * Phase 2 (docs/contract.md §8.2 order items 3–6), after the model is resolved and the template rendered: context length,
 * sampling parameters in SamplingParams' order, greedy with n > 1, then the engine's checks. Throws 400
 * BadRequestError; returns the fully defaulted request.
 */
export function resolveSamplingRequest(req: ChatRequest, ctx: SamplingContext): SamplingRequest {
  const template = checkTemplateRequest(req);
  const L = ctx.maxModelLen;
  const V = ctx.vocabSize;
  const gen = ctx.generationConfig ?? {};
  const maxLogprobs = ctx.maxLogprobs;

  // (3) truncation size, then the context checks of docs/contract.md §8.10 on the truncated prompt.
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
  // The first non-null of max_completion_tokens and max_tokens (docs/contract.md §8.1).
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
  // docs/contract.md §8.7: with echo an unset prompt_logprobs takes top_logprobs.
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
    // Deliberate deviation (docs/vllm-compat.md): vLLM samples from an all −inf row here and emits a token
    // outside allowed_token_ids; refusing is the only answer that keeps the client's token restriction.
    const masked = new Set<number>([...clientStopIds, ...(ctx.eosTokenId != null ? [ctx.eosTokenId] : [])]);
    if (minTokens > 0 && allowed.every((id) => masked.has(id))) {
      throw engineError(
        `allowed_token_ids leaves no token to sample while min_tokens=${pyInt(minTokens)} masks EOS and stop_token_ids: every allowed id is one of them.`,
        'allowed_token_ids',
      );
    }
  }
  const structured = resolveStructuredOutput(req);
  if (structured) {
    const c = structured.spec.constraint;
    if (c.kind === 'choice' && c.choices.length === 0) {
      throw engineError("Choice '[]' cannot be an empty list", structured.source);
    }
    // An upstream vLLM model never comes here (its backend relays the request), so these are always refused.
    if (c.kind === 'grammar' || c.kind === 'structural_tag') {
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

  // Generation-config EOS ids stop with a numeric stop_reason unless ignore_eos (docs/contract.md §8.5).
  const stopTokenIds = [...clientStopIds];
  if (!req.ignore_eos && gen.eos_token_id != null) {
    const extra = typeof gen.eos_token_id === 'number' ? [gen.eos_token_id] : [...gen.eos_token_id];
    for (const id of extra) if (id !== ctx.eosTokenId && !stopTokenIds.includes(id)) stopTokenIds.push(id);
  }

  const lastMessage = req.messages.at(-1);
  const responseRole = req.add_generation_prompt ? 'assistant' : (lastMessage?.role ?? 'assistant');
  const echoText = req.echo && lastMessage && lastMessage.role === responseRole ? textOf(lastMessage.content) : '';

  const baseRequestId = ctx.headerRequestId || req.request_id || randomHex32();
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

/** The prompt ids the engine sees: the last `truncate_prompt_tokens` of the templated prompt (docs/contract.md §8.10). */
export function truncatePrompt<T>(
  promptTokenIds: readonly T[],
  sampling: Pick<SamplingRequest, 'truncate_prompt_tokens'>,
): T[] {
  const k = sampling.truncate_prompt_tokens;
  return k !== null && promptTokenIds.length > k
    ? promptTokenIds.slice(promptTokenIds.length - k)
    : [...promptTokenIds];
}
