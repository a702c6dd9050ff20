import { ApiError } from '@/lib/errors';
import type { SampledSequence, SampleResult } from '@/lib/tinker/types';
import { componentLogger } from '@/lib/logger';
import { descriptionTokenizer, type BuiltinModelDescription } from './backends/builtin';
import type { VllmTarget } from './backends/vllm';
import type { EngineEvent } from './engine-events';
import type { PromptPositionLogprobs } from './logprobs';
import { inferencePool } from './pool';
import { upstreamServer } from './upstream';
import { vllmError } from './vllm-lora';
import type { WireSequence } from './wire';

const log = componentLogger('sampler');

/**
 * Token-level sampling, the engine side of Tinker's `asample` (docs/tinker.md): prompt ids in, sampled ids and
 * their log-probabilities out, with vLLM's sampling semantics (which Tinker's own sampler follows), on the same
 * engines that serve chat. No chat template, no special-token skipping, nothing cut: an RL client trains on
 * exactly the tokens it gets back, so every generated token is returned, the one that stopped generation included.
 */

/** Tinker's `SamplingParams` as the SDK sends them (tinker/types/sampling_params.py). */
export interface TinkerSamplingParams {
  /** Default: the rest of the context. */
  max_tokens?: number | null;
  /** Sample i of a request uses seed + i; null (or −1, as vLLM reads it) is unseeded. */
  seed?: number | null;
  /** Stop strings, or stop token ids. */
  stop?: string | string[] | number[] | null;
  /** Default 1; 0 is greedy. */
  temperature?: number;
  /** Default −1 (off). */
  top_k?: number;
  /** Default 1 (off). */
  top_p?: number;
}

/** The most samples of one prompt in one request (vLLM's and chat's cap on `n`). */
export const MAX_NUM_SAMPLES = 128;

/** What the checks need to know of the model; null where only the engine knows (vLLM then checks it itself). */
export interface SamplingLimits {
  vocabSize: number | null;
  /** Null: a vLLM server that does not report it; `max_tokens` is then required. */
  contextLength: number | null;
  /** The most prompt logprob candidates per position (TUNEBOARD_MAX_LOGPROBS). */
  maxLogprobs: number;
}

/** A sampling request with every default applied and every check passed. */
export interface TokenSampling {
  prompt: number[];
  numSamples: number;
  maxTokens: number;
  temperature: number;
  /** 0: off. */
  topK: number;
  topP: number;
  seed: bigint | null;
  stopStrings: string[];
  stopTokenIds: number[];
  promptLogprobs: boolean;
  /** Candidates per prompt position (0: none). */
  topkPromptLogprobs: number;
}

export interface TokenSamplingInput {
  prompt: readonly number[];
  numSamples: number;
  params: TinkerSamplingParams;
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function bad(message: string): ApiError {
  return new ApiError('bad_request', message);
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** A value as a message shows it: a string quoted, so that `"1"` does not read as the number it is not. */
const shown = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** Ids outside [0, vocab), at most five of them, as a message shows them. */
function outOfVocab(ids: readonly number[], vocabSize: number): string | null {
  const badIds: string[] = [];
  for (let i = 0; i < ids.length && badIds.length < 5; i++) {
    if (!isInt(ids[i]) || ids[i] < 0 || ids[i] >= vocabSize) badIds.push(`${shown(ids[i])} (position ${i})`);
  }
  return badIds.length ? badIds.join(', ') : null;
}

/**
 * Checks a sampling request and applies Tinker's defaults (temperature 1, top_k −1, top_p 1, max_tokens the rest of
 * the context). Every problem is a 400 that says what to change; nothing a client sends reaches an engine
 * unchecked, except what only vLLM knows (its vocabulary, and its context if it does not report it), which it
 * checks itself.
 */
export function resolveTokenSampling(input: TokenSamplingInput, limits: SamplingLimits): TokenSampling {
  const { prompt, numSamples } = input;
  const params = input.params ?? {};
  if (!isInt(numSamples) || numSamples < 1 || numSamples > MAX_NUM_SAMPLES)
    throw bad(`num_samples must be an integer from 1 to ${MAX_NUM_SAMPLES}, got ${shown(numSamples)}.`);
  if (!Array.isArray(prompt) || prompt.length === 0)
    throw bad('The prompt is empty: sampling needs at least one prompt token.');
  const vocab = limits.vocabSize;
  const promptProblem = outOfVocab(prompt, vocab ?? Number.MAX_SAFE_INTEGER);
  if (promptProblem)
    throw bad(
      vocab === null
        ? `Prompt token ids must be non-negative integers: ${promptProblem}.`
        : `Prompt token ids must be in the model's vocabulary, 0 to ${vocab - 1}: ${promptProblem}.`,
    );

  const maxTokens = params.max_tokens ?? null;
  if (maxTokens !== null && (!isInt(maxTokens) || maxTokens < 1))
    throw bad(`sampling_params.max_tokens must be an integer of at least 1, got ${shown(maxTokens)}.`);
  const temperature = params.temperature ?? 1;
  if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature))
    throw bad(`sampling_params.temperature must be a number of at least 0 (0 is greedy), got ${shown(temperature)}.`);
  const topK = params.top_k ?? -1;
  if (!isInt(topK) || topK < -1)
    throw bad(`sampling_params.top_k must be -1 (off) or a positive integer, got ${shown(topK)}.`);
  const topP = params.top_p ?? 1;
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1))
    throw bad(`sampling_params.top_p must be in (0, 1], got ${shown(topP)}.`);
  const seed = params.seed ?? null;
  if (seed !== null && (!isInt(seed) || BigInt(seed) < INT64_MIN || BigInt(seed) > INT64_MAX))
    throw bad(`sampling_params.seed must be a 64-bit integer, got ${shown(seed)}.`);
  const { stopStrings, stopTokenIds } = resolveStop(params.stop ?? null, vocab);

  const k = input.topkPromptLogprobs ?? 0;
  if (!isInt(k) || k < 0 || k > limits.maxLogprobs)
    throw bad(
      `topk_prompt_logprobs must be an integer from 0 to ${limits.maxLogprobs} (TUNEBOARD_MAX_LOGPROBS), got ${shown(k)}.`,
    );

  const L = limits.contextLength;
  if (L !== null && prompt.length >= L)
    throw bad(
      `The prompt has ${prompt.length} tokens and the model's context is ${L}: no room is left to generate. Shorten the prompt to at most ${L - 1} tokens.`,
    );
  if (L !== null && maxTokens !== null && prompt.length + maxTokens > L)
    throw bad(
      `The prompt has ${prompt.length} tokens and max_tokens is ${maxTokens}, past the model's context of ${L}: lower max_tokens to at most ${L - prompt.length}, or leave it unset for the rest of the context.`,
    );
  const generated = maxTokens ?? (L === null ? null : L - prompt.length);
  // vLLM's own default is 16 tokens, not the rest of the context (so is a null max_tokens, since 0.11): without
  // the context length there is no default to send it.
  if (generated === null)
    throw bad(
      'sampling_params.max_tokens is required for this model: its vLLM server does not report its context length.',
    );

  return {
    prompt: [...prompt],
    numSamples,
    maxTokens: generated,
    temperature,
    topK: topK === -1 ? 0 : topK,
    topP,
    // −1 is vLLM's "no seed" (SamplingParams.__post_init__), so it is the same on both engines.
    seed: seed === null || seed === -1 ? null : BigInt(seed),
    stopStrings,
    stopTokenIds,
    promptLogprobs: input.promptLogprobs === true,
    topkPromptLogprobs: k,
  };
}

/** Tinker's `stop`: one string, a list of strings, or a list of token ids (never a mix). */
function resolveStop(
  stop: TinkerSamplingParams['stop'],
  vocab: number | null,
): { stopStrings: string[]; stopTokenIds: number[] } {
  if (stop === null) return { stopStrings: [], stopTokenIds: [] };
  const list: unknown[] = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [stop];
  if (list.every((s) => typeof s === 'string')) {
    if (list.includes('')) throw bad('sampling_params.stop cannot contain an empty string.');
    return { stopStrings: [...new Set(list as string[])], stopTokenIds: [] };
  }
  if (list.every(isInt)) {
    const ids = list as number[];
    const problem = outOfVocab(ids, vocab ?? Number.MAX_SAFE_INTEGER);
    if (problem)
      throw bad(
        vocab === null
          ? `sampling_params.stop token ids must be non-negative integers: ${problem}.`
          : `sampling_params.stop token ids must be in the model's vocabulary, 0 to ${vocab - 1}: ${problem}.`,
      );
    return { stopStrings: [], stopTokenIds: [...new Set(ids)] };
  }
  throw bad('sampling_params.stop must be a string, a list of strings or a list of token ids.');
}

// ---- The built-in engine ------------------------------------------------------------------------------------

/**
 * The engine's per-sample input. Generation ends at the model's EOS and its generation-config stop ids (as chat
 * without ignore_eos), at the request's stop ids, or once the text holds a stop string; the text is decoded with
 * special tokens and the stop string kept, as the vLLM path asks for, so that both engines stop on the same token.
 */
export function builtinSequences(
  s: TokenSampling,
  eosId: number | null,
  modelStopIds: readonly number[],
): WireSequence[] {
  const stopTokenIds = [...s.stopTokenIds];
  for (const id of modelStopIds) if (id !== eosId && !stopTokenIds.includes(id)) stopTokenIds.push(id);
  return Array.from({ length: s.numSamples }, (_, choice) => ({
    promptTokenIds: s.prompt,
    maxTokens: s.maxTokens,
    sampling: { temperature: s.temperature, topK: s.topK, topP: s.topP, stopTokenIds },
    stop: s.stopStrings,
    eosTokenId: eosId,
    ignoreEos: false,
    includeStopStrInOutput: true,
    skipSpecialTokens: false,
    topLogprobs: 0,
    seed: s.seed === null ? null : s.seed.toString(),
    choice,
  }));
}

/** Each sample's tokens, logprobs and finish reason, gathered from the engine's events (nothing else is done per token). */
async function collectSamples(
  events: AsyncIterable<EngineEvent>,
  n: number,
): Promise<{ sequences: SampledSequence[]; aborted: boolean }> {
  const tokens: number[][] = Array.from({ length: n }, () => []);
  const logprobs: number[][] = Array.from({ length: n }, () => []);
  const finish: (string | undefined)[] = new Array(n);
  for await (const e of events) {
    if (e.type === 'token') {
      tokens[e.choice].push(e.tokenId);
      logprobs[e.choice].push(e.logprob);
    }
    if (e.finishReason) finish[e.choice] = e.finishReason;
  }
  const sequences: SampledSequence[] = [];
  for (let i = 0; i < n; i++) {
    const reason = finish[i];
    if (reason === 'abort') return { sequences: [], aborted: true };
    if (reason !== 'stop' && reason !== 'length') throw new Error(`sample ${i} ended without a finish reason`);
    sequences.push({ stop_reason: reason, tokens: tokens[i], logprobs: logprobs[i] });
  }
  return { sequences, aborted: false };
}

/** The engine's prompt logprobs as Tinker returns them: only what was asked for, null at the first position. */
export function promptLogprobsResult(
  positions: readonly (PromptPositionLogprobs | null)[] | null,
  s: Pick<TokenSampling, 'promptLogprobs' | 'topkPromptLogprobs'>,
): Pick<SampleResult, 'prompt_logprobs' | 'topk_prompt_logprobs'> {
  return {
    prompt_logprobs: s.promptLogprobs && positions ? positions.map((p) => p?.token.logprob ?? null) : null,
    topk_prompt_logprobs:
      s.topkPromptLogprobs > 0 && positions
        ? positions.map(
            (p) =>
              p?.ranked.slice(0, s.topkPromptLogprobs).map((c): [number, number] => [c.tokenId, c.logprob]) ?? null,
          )
        : null,
  };
}

/** The engine failed (a model that would not load, adapter files gone): a server error that says so. */
function engineFailure(err: unknown): ApiError {
  return new ApiError(
    'internal',
    `The engine failed while sampling: ${err instanceof Error ? err.message : String(err)}`,
  );
}

/**
 * Samples on the built-in engine, in the inference worker threads (the request thread only gathers events). The
 * samples of one prompt share its prefill.
 */
export async function sampleOnBuiltin(
  d: BuiltinModelDescription,
  s: TokenSampling,
  signal?: AbortSignal,
): Promise<SampleResult> {
  signal?.throwIfAborted();
  const tokenizer = descriptionTokenizer(d);
  const eosId = tokenizer.specialTokenId(d.chatEosToken) ?? null;
  const wantPrompt = s.promptLogprobs || s.topkPromptLogprobs > 0;
  // A base on llama.cpp runs a request's samples together in its fixed slots (as chat's n), and needs its GGUF file.
  const served = (await d.prepare?.()) ?? d;
  if (served.maxChoices !== undefined && s.numSamples > served.maxChoices) {
    throw bad(
      `num_samples must be at most ${served.maxChoices} for this model, got ${s.numSamples}: llama.cpp serves it with ${served.maxChoices} concurrent sequences (the base-models file's "slots")`,
    );
  }
  const handle = inferencePool().generate({
    model: served.model,
    loadWeights: served.loadWeights,
    baseWeights: served.hf?.baseWeights,
    sequences: builtinSequences(s, eosId, d.hf?.stopTokenIds ?? []),
    promptLogprobs: wantPrompt ? s.topkPromptLogprobs : null,
  });
  const abort = () => handle.abort();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const { sequences, aborted } = await collectSamples(handle.events, s.numSamples);
    signal?.throwIfAborted();
    if (aborted) throw new Error('the engine aborted the generation');
    const { promptLogprobs } = await handle.finished;
    return { sequences, ...promptLogprobsResult(promptLogprobs, s) };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw err instanceof ApiError ? err : engineFailure(err);
  } finally {
    signal?.removeEventListener('abort', abort);
  }
}

// ---- vLLM -------------------------------------------------------------------------------------------------------

/** vLLM refuses n > 1 with greedy sampling; greedy samples are all the same, so one is asked for and repeated. */
const repeatsOneSample = (s: TokenSampling) => s.temperature === 0 && s.numSamples > 1;

/**
 * The body of vLLM's `POST /v1/completions` for a sampling request. The prompt goes as token ids; `logprobs: 0`
 * returns each sampled token's logprob (vLLM's default logprobs mode is the raw model's, as Tinker's importance
 * sampling needs), `return_tokens_as_token_ids` names tokens `token_id:N`, and special tokens and stop strings stay
 * in the text so it stops where the built-in engine would. Text, because a 64-bit seed does not survive a
 * JavaScript number.
 */
export function completionsBody(model: string, s: TokenSampling): string {
  const body = {
    model,
    prompt: s.prompt,
    n: repeatsOneSample(s) ? 1 : s.numSamples,
    max_tokens: s.maxTokens,
    temperature: s.temperature,
    top_p: s.topP,
    // −1 is "off" to every vLLM version (0 was refused before 0.8).
    top_k: s.topK === 0 ? -1 : s.topK,
    // Explicit, so that a model's generation_config (which vLLM applies to what a request leaves out) cannot add a
    // penalty or min_p the built-in engine would not apply.
    min_p: 0,
    repetition_penalty: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    stop: s.stopStrings,
    stop_token_ids: s.stopTokenIds,
    include_stop_str_in_output: true,
    skip_special_tokens: false,
    logprobs: 0,
    return_tokens_as_token_ids: true,
    ...(s.promptLogprobs || s.topkPromptLogprobs > 0 ? { prompt_logprobs: s.topkPromptLogprobs } : {}),
    stream: false,
  };
  const json = JSON.stringify(body);
  return s.seed === null ? json : `${json.slice(0, -1)},"seed":${s.seed.toString()}}`;
}

interface CompletionChoice {
  index?: number;
  finish_reason?: unknown;
  logprobs?: { tokens?: unknown; token_logprobs?: unknown } | null;
  prompt_logprobs?: unknown;
}

type PromptPosition = Record<string, { logprob?: unknown; rank?: unknown } | undefined> | null;

const TOKEN_ID = /^token_id:(\d+)$/;

/**
 * A vLLM completion answer (`{"choices": [{"index", "logprobs": {"tokens": ["token_id:N"…], "token_logprobs"},
 * "finish_reason", "prompt_logprobs": [null, {"<id>": {"logprob", "rank", "decoded_token"}}…]}]}`) as a
 * SampleResult. Throws what is wrong with an answer that does not have that shape.
 */
export function sampleResultFromCompletion(answer: unknown, s: TokenSampling): SampleResult {
  const choices = (answer as { choices?: unknown })?.choices;
  const expected = repeatsOneSample(s) ? 1 : s.numSamples;
  if (!Array.isArray(choices) || choices.length !== expected)
    throw new Error(`expected ${expected} choices, got ${Array.isArray(choices) ? choices.length : 'none'}`);
  const ordered = [...(choices as CompletionChoice[])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const sequences = ordered.map((c, i): SampledSequence => {
    const reason = c.finish_reason;
    if (reason !== 'stop' && reason !== 'length') throw new Error(`choice ${i} finished with ${String(reason)}`);
    const names = c.logprobs?.tokens;
    const values = c.logprobs?.token_logprobs;
    if (!Array.isArray(names) || !Array.isArray(values) || names.length !== values.length)
      throw new Error(`choice ${i} has no token logprobs`);
    const tokens = names.map((t) => {
      const m = typeof t === 'string' ? TOKEN_ID.exec(t) : null;
      if (!m) throw new Error(`choice ${i} names a token ${JSON.stringify(t)}, not token_id:N`);
      return Number(m[1]);
    });
    const logprobs = values.map((v) => {
      if (typeof v !== 'number') throw new Error(`choice ${i} has a token without a logprob`);
      return v;
    });
    return { stop_reason: reason, tokens, logprobs };
  });
  const all = repeatsOneSample(s)
    ? Array.from({ length: s.numSamples }, () => ({
        ...sequences[0],
        tokens: [...sequences[0].tokens],
        logprobs: [...sequences[0].logprobs],
      }))
    : sequences;
  if (!s.promptLogprobs && s.topkPromptLogprobs === 0)
    return { sequences: all, prompt_logprobs: null, topk_prompt_logprobs: null };
  const positions = ordered[0].prompt_logprobs;
  if (!Array.isArray(positions) || positions.length !== s.prompt.length)
    throw new Error('the answer has no prompt logprobs for every prompt token');
  return { sequences: all, ...promptLogprobsResult(promptPositions(positions as PromptPosition[], s), s) };
}

/**
 * vLLM's prompt logprobs, a dict per position: the prompt token and the top k by rank, as the engine's positions.
 */
function promptPositions(positions: PromptPosition[], s: TokenSampling): (PromptPositionLogprobs | null)[] {
  return positions.map((dict, i) => {
    if (i === 0 || dict === null) return null;
    const actual = dict[String(s.prompt[i])];
    if (typeof actual?.logprob !== 'number') throw new Error(`prompt position ${i} has no logprob for its token`);
    const ranked = Object.entries(dict)
      .map(([id, v]) => ({
        tokenId: Number(id),
        logprob: typeof v?.logprob === 'number' ? v.logprob : -Infinity,
        rank: typeof v?.rank === 'number' ? v.rank : null,
        tokenText: '',
      }))
      // The prompt token is listed whatever its rank: past k it is not one of the top k.
      .filter((c) => c.rank !== null && c.rank <= s.topkPromptLogprobs)
      .sort((a, b) => a.rank! - b.rank! || b.logprob - a.logprob);
    return { token: { tokenId: s.prompt[i], logprob: actual.logprob, tokenText: '', rank: null }, ranked };
  });
}

function unavailable(message: string, retryAfter: string): ApiError {
  return new ApiError('unavailable', message, { headers: { 'retry-after': retryAfter } });
}

/**
 * Samples on the vLLM server through its completions API. A checkpoint's adapter is loaded first (`prepare`), and
 * a 404 for it is retried once after `forget`, as chat does (vLLM restarted or another process unloaded it). vLLM's
 * 400s are the client's (its message says what: a token out of its vocabulary, a prompt past its context);
 * anything else it answers, or its silence, is a 503.
 */
export async function sampleOnVllm(target: VllmTarget, s: TokenSampling, signal?: AbortSignal): Promise<SampleResult> {
  const server = upstreamServer();
  if (!server) throw unavailable('The vLLM server for this model is not configured (TUNEBOARD_UPSTREAM_URL)', '30');
  const body = completionsBody(target.model, s);
  const send = async () => {
    await target.prepare?.();
    try {
      const res = await server.fetch(`${server.baseUrl}/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(server.apiKey ? { authorization: `Bearer ${server.apiKey}` } : {}),
        },
        body,
        signal,
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      log.error({ err }, 'upstream sampling request failed');
      throw unavailable('The vLLM server for this model is not reachable; try again later', '5');
    }
  };
  let res = await send();
  if (res.status === 404 && target.prepare && target.forget) {
    target.forget();
    res = await send();
  }
  if (res.status >= 200 && res.status < 300) {
    try {
      return sampleResultFromCompletion(JSON.parse(res.text), s);
    } catch (err) {
      log.error({ err }, 'unreadable vLLM completion');
      throw unavailable(
        `The vLLM server sent a completion that could not be read: ${err instanceof Error ? err.message : String(err)}`,
        '5',
      );
    }
  }
  const { message } = vllmError(res.text);
  if (res.status === 400 || res.status === 422)
    throw new ApiError(
      'bad_request',
      `The vLLM server refused the sampling request: ${message ?? `HTTP ${res.status}`}`,
    );
  if (res.status === 404)
    throw unavailable(`The vLLM server does not serve ${target.model}${message ? ` (${message})` : ''}`, '30');
  throw unavailable(`The vLLM server failed to sample (HTTP ${res.status}${message ? `: ${message}` : ''})`, '5');
}
