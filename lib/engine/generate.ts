import type { KvCache, LanguageModel } from './model';
import type { Generator } from './random';
import {
  compactSamplingApplies,
  logSoftmax,
  resolveSamplingParams,
  sampleNext,
  sampleNextCompact,
  type CompactLogits,
  type SampleResult,
  SequenceState,
  tokenRank,
  topTokens,
  type ResolvedSamplingParams,
  type SamplingParams,
  type TokenLogprob,
} from './sampler';
import { IncrementalDetokenizer, type TokenPieces } from './tokenizer';
import { applyTokenMask, type ConstraintState, type TokenConstraint } from './constrained/token-constraint';
import { findStopString } from './stop-strings';

/**
 * Generation loop with vLLM's stop semantics (docs/vllm-compat.md): the engine-side check (EOS, then
 * stop_token_ids, neither before min_tokens, then length) runs before detokenisation, and stop strings are
 * searched afterwards in the newly added text only. Sequences decode together in batched steps.
 */

export interface GenerationRequest {
  promptTokenIds: readonly number[];
  /** Already resolved by the caller (default: the rest of the context). Must be ≥ 1. */
  maxTokens: number;
  sampling?: SamplingParams;
  /** Stop strings, searched in list order; first match wins. */
  stop?: readonly string[];
  /** EOS stops with stop_reason null unless ignoreEos. Extra EOS ids belong in sampling.stopTokenIds. */
  eosTokenId?: number | null;
  ignoreEos?: boolean;
  includeStopStrInOutput?: boolean;
  /** Default true, as in vLLM. */
  skipSpecialTokens?: boolean;
  /** Entries per token in `topLogprobs` (0 = none). */
  topLogprobs?: number;
  /** Ranked entries per prompt position (null = no prompt logprobs). */
  promptLogprobs?: number | null;
  /** This sequence's generator: choice i of a seeded request uses seed + i (see choiceGenerator). */
  generator: Generator;
  /**
   * Structured output (lib/engine/constrained): disallowed tokens get −∞ on the raw logits before the
   * sampling pipeline, as vLLM applies its grammar bitmask before the sampler (so logprobs are those of
   * the constrained distribution). Once the output is complete only its end tokens remain allowed; once an
   * end token was sampled under ignore_eos the constraint is over and every token is allowed again, as vLLM
   * fills a terminated grammar's bitmask with ones.
   */
  constraint?: TokenConstraint | null;
  /**
   * The constraint starts only once this token has been generated (the reasoning parser's `</think>`): vLLM applies
   * a structured output's grammar after the think block when the model has a reasoning parser, so the model
   * reasons freely and the answer after it follows the schema. Until then every step is unconstrained. Absent or
   * null: from the first token.
   */
  constraintAfterTokenId?: number | null;
}

export type FinishReason = 'stop' | 'length' | 'abort';

export interface GeneratedToken {
  tokenId: number;
  logprob: number;
  rank: number;
  topLogprobs: TokenLogprob[];
  /** The `topLogprobs`-many most likely tokens by rank, best first (vLLM's top-k list beside the sampled token). */
  ranked: TokenLogprob[];
}

export interface PromptLogprob {
  tokenId: number;
  logprob: number;
  rank: number;
  /** The most likely tokens at this position, by rank. */
  top: TokenLogprob[];
}

export interface GenerationResult {
  /** Every generated token, stop/EOS and string-truncated ones included (they count in completion_tokens). */
  tokens: GeneratedToken[];
  text: string;
  finishReason: FinishReason;
  stopReason: string | number | null;
  /** First entry null (no context predicts the first prompt token), as vLLM returns it. */
  promptLogprobs: Array<PromptLogprob | null> | null;
}

export interface TokenEvent {
  /** Index of the request in the `generate` call. */
  index: number;
  token: GeneratedToken;
  /** Text that may be shown now; streaming holdback keeps a possible stop-string prefix back until the end. */
  textDelta: string;
  /**
   * What the detokenizer produced for this token, before any stop-string cut or holdback ('' for a stopping
   * EOS / stop id, which is not detokenised). For callers that apply the text rules themselves.
   */
  rawText: string;
  /** Set on the last event of a sequence. */
  finishReason: FinishReason | null;
  stopReason: string | number | null;
}

export interface GenerateOptions {
  signal?: AbortSignal;
  onToken?: (event: TokenEvent) => void;
}

/**
 * What one step needs of a sequence's next-token logits (see SequenceDecoder.logitNeed): the top `k` entries and
 * the normaliser (greedy), the head of the distribution with a test of whether it decides the draw (sampling), or
 * null for every logit.
 */
export type LogitNeed = number | SampledNeed | null;

export interface SampledNeed {
  /** The temperature the head's normaliser (CompactLogits.zT) must be computed at. */
  readonly temperature: number;
  /**
   * Whether this head decides the step exactly (sampleNextCompact with the step's draw, peeked); else read all. A
   * head without zT (bounded from z1) that does not decide is asked again once the engine has read zT: only that
   * answer counts for the back-off below.
   */
  decides(read: CompactLogits): boolean;
}

/** A next-token row: every raw logit, or the head an engine read for a SampledNeed that it decides. */
export type LogitRow = Float32Array | CompactLogits;

/** One sequence's sampling state, detokeniser and stop logic; usable by any scheduler. */
export class SequenceDecoder {
  readonly tokens: GeneratedToken[] = [];
  finishReason: FinishReason | null = null;
  stopReason: string | number | null = null;
  private text = '';
  private emitted = 0;
  private stopCheckOffset = 0;
  private readonly state: SequenceState;
  private readonly params: ResolvedSamplingParams;
  private readonly detok: IncrementalDetokenizer;
  private readonly holdback: number;
  private readonly stopIds: Set<number>;
  private constraintState: ConstraintState | null;
  /** The constraint waits for request.constraintAfterTokenId (see GenerationRequest). */
  private constraintWaits: boolean;
  /** Steps left that read the full row instead of the head (logitNeed), and the next such pause's length. */
  private headSkip = 0;
  private headBackoff = 1;
  /** The constrained step's masked logits (see step). */
  private maskedLogits: Float32Array | null = null;

  constructor(
    tokenizer: TokenPieces,
    readonly request: GenerationRequest,
    /** Context length: prompt + output reaching it ends the sequence with `length`. */
    private readonly contextLength: number,
  ) {
    if (!(request.maxTokens >= 1)) throw new RangeError('maxTokens must be at least 1');
    this.state = new SequenceState(request.promptTokenIds);
    const eos = request.eosTokenId ?? null;
    this.params = resolveSamplingParams({ ...request.sampling, eosTokenIds: eos === null ? [] : [eos] });
    this.detok = new IncrementalDetokenizer(tokenizer, { skipSpecialTokens: request.skipSpecialTokens ?? true });
    const stops = request.stop ?? [];
    if (stops.some((s) => s.length === 0)) throw new Error('stop cannot contain an empty string.');
    this.holdback = stops.length && !request.includeStopStrInOutput ? Math.max(...stops.map((s) => s.length)) - 1 : 0;
    this.stopIds = new Set(request.sampling?.stopTokenIds ?? []);
    this.constraintState = request.constraint?.initialState ?? null;
    this.constraintWaits = Boolean(request.constraint) && request.constraintAfterTokenId != null;
  }

  get finished(): boolean {
    return this.finishReason !== null;
  }

  /**
   * What the next step needs of its raw logits (an engine that can return part of a row faster than all of it,
   * llama.cpp, uses this; see lib/inference/llama-cpp.ts). Greedy with no processor that can change the order of
   * the vocabulary (allowed ids, bad words, min_tokens masking, logit_bias, penalties, a grammar) picks the argmax,
   * and its logprob, rank and top-k list are functions of the top k + 1 logits and the normaliser: `k`. Sampling
   * with only temperature, min_p, top_k and top_p: the head of the distribution decides most draws
   * (sampleNextCompact); `decides` peeks at this sequence's next uniform draw without taking it. Else null.
   */
  logitNeed(): LogitNeed {
    const p = this.params;
    if (this.request.constraint && !this.constraintWaits) return null;
    if (p.greedy) {
      if (p.allowedTokenIds || p.badWordsTokenIds.length || p.logitBias.length) return null;
      if (this.tokens.length < p.minTokens) return null;
      if (p.repetitionPenalty !== 1 || p.frequencyPenalty !== 0 || p.presencePenalty !== 0) return null;
      return this.request.topLogprobs ?? 0;
    }
    if (!compactSamplingApplies(p, this.tokens.length)) return null;
    // A distribution whose head did not decide the last draws (too wide to be read whole, most likely) is read in
    // full for a while: a head read that cannot decide costs on top of the full one. 1, 2, 4 … 32 steps.
    if (this.headSkip > 0) {
      this.headSkip--;
      return null;
    }
    const generator = this.request.generator;
    return {
      temperature: p.temperature,
      decides: (read) => {
        const decided = sampleNextCompact(read, p, generator.clone().random(), this.request.topLogprobs ?? 0) !== null;
        if (!decided && read.zT === null) return false;
        if (decided) this.headBackoff = 1;
        else {
          this.headSkip = this.headBackoff;
          this.headBackoff = Math.min(32, 2 * this.headBackoff);
        }
        return decided;
      },
    };
  }

  /** Samples from this step's raw logits, records the token and applies the stop rules. */
  step(row: LogitRow, index: number): TokenEvent {
    if (!(row instanceof Float32Array)) return this.record(this.sampleCompact(row), index);
    const logits = row;
    const constraint = this.request.constraint;
    // Under ignore_eos, once the grammar accepted its end token it is over and masks nothing: vLLM fills a
    // terminated grammar's bitmask with ones. (An end token forced by min_tokens — every other token masked —
    // keeps only end tokens allowed; vLLM would sample from an all −∞ row there.)
    const cs =
      this.constraintWaits || (this.constraintState?.ended && this.request.ignoreEos) ? null : this.constraintState;
    let input = logits;
    if (constraint && cs) {
      // One row per sequence, reused at every step: a fresh one was 600 KB to allocate and zero per token with
      // Qwen3's vocabulary. sampleNext keeps nothing of it.
      if (this.maskedLogits?.length !== logits.length) this.maskedLogits = new Float32Array(logits.length);
      input = applyTokenMask(logits, constraint.allowedTokens(cs), this.maskedLogits);
    }
    const r = sampleNext(input, this.params, this.state, this.request.generator, this.request.topLogprobs ?? 0);
    // The sampled token is always allowed (sampleNext's all-masked fallback takes the argmax of these
    // masked logits); advance() returning null is therefore unreachable and the state is kept.
    if (constraint && cs) this.constraintState = constraint.advance(cs, r.tokenId) ?? cs;
    return this.record(r, index);
  }

  /** The step on a head the engine read for logitNeed()'s SampledNeed: its `decides` said this draw is decided. */
  private sampleCompact(read: CompactLogits): SampleResult {
    // Greedy draws nothing (as sampleNext).
    const u = this.params.greedy ? 0 : this.request.generator.random();
    const r = sampleNextCompact(read, this.params, u, this.request.topLogprobs ?? 0);
    // `decides` ran on the same draw (peeked) and the same head; a head that does not decide never gets here.
    if (!r) throw new Error('the engine handed over a head of the logits that does not decide this step');
    return r;
  }

  /** Records a sampled token and applies the stop rules. */
  private record(r: SampleResult, index: number): TokenEvent {
    const token: GeneratedToken = {
      tokenId: r.tokenId,
      logprob: r.logprob,
      rank: r.rank,
      topLogprobs: r.topLogprobs,
      ranked: r.ranked,
    };
    this.tokens.push(token);
    this.state.append(r.tokenId);
    // The constraint applies from the step after its start token (the think block's end).
    if (this.constraintWaits && r.tokenId === this.request.constraintAfterTokenId) this.constraintWaits = false;
    const n = this.tokens.length;
    const req = this.request;
    const minTokens = req.sampling?.minTokens ?? 0;

    // Engine-side check in vLLM's order (check_stop, v0.12 and later): EOS, then stop ids — neither before
    // min_tokens —, then length. A last token that is EOS or a stop id therefore stops with "stop" even when
    // it also reaches max_tokens or fills the context. (min_tokens ≤ max_tokens ≤ context − prompt is
    // validated, so checking length regardless of min_tokens changes nothing but guards the context.)
    if (n >= minTokens) {
      if (!req.ignoreEos && req.eosTokenId != null && r.tokenId === req.eosTokenId) this.finishReason = 'stop';
      else if (this.stopIds.has(r.tokenId)) {
        this.finishReason = 'stop';
        this.stopReason = r.tokenId;
      }
    }
    if (!this.finished && (n >= req.maxTokens || req.promptTokenIds.length + n >= this.contextLength))
      this.finishReason = 'length';

    // A stopping EOS / stop id is not detokenised unless the stop string is to be included.
    let rawText = '';
    if (!(this.finishReason === 'stop' && !req.includeStopStrInOutput)) {
      rawText = this.detok.push(r.tokenId);
      this.text += rawText;
      // Text produced within the first min_tokens tokens is never searched for stop strings.
      if (n <= minTokens) this.stopCheckOffset = this.text.length;
    }
    if (req.stop?.length && n > minTokens) this.checkStopStrings();

    let visible = this.finished ? this.text.length : Math.max(this.emitted, this.text.length - this.holdback);
    visible = Math.min(visible, this.text.length);
    const textDelta = this.text.slice(this.emitted, visible);
    this.emitted = visible;
    return { index, token, textDelta, rawText, finishReason: this.finishReason, stopReason: this.stopReason };
  }

  /** Ends the sequence early (client went away). */
  abort(): void {
    if (!this.finished) this.finishReason = 'abort';
  }

  result(promptLogprobs: Array<PromptLogprob | null> | null): GenerationResult {
    return {
      tokens: this.tokens,
      text: this.text,
      finishReason: this.finishReason ?? 'abort',
      stopReason: this.stopReason,
      promptLogprobs,
    };
  }

  /** vLLM's check_stop_strings over the text added since the last check. */
  private checkStopStrings(): void {
    const newChars = this.text.length - this.stopCheckOffset;
    this.stopCheckOffset = this.text.length;
    const match = findStopString(this.text, newChars, this.request.stop ?? [], !!this.request.includeStopStrInOutput);
    if (!match) return;
    this.text = this.text.slice(0, match.cutAt);
    this.finishReason = 'stop';
    this.stopReason = match.stop;
  }
}

// A synchronous loop would starve the worker's message port, so an abort posted from another thread
// could never be seen; yielding every few milliseconds costs almost nothing.
const YIELD_EVERY_MS = 5;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );
}

/**
 * Generates for several requests at once: identical prompts are prefilled once (n > 1 choices share the
 * prefix) and every step decodes all unfinished sequences in one batched forward pass.
 */
export async function generate(
  model: LanguageModel,
  tokenizer: TokenPieces,
  requests: readonly GenerationRequest[],
  options: GenerateOptions = {},
): Promise<GenerationResult[]> {
  const ctx = model.config.ctx;
  for (const r of requests) {
    if (r.promptTokenIds.length === 0) throw new Error('generate: empty prompt');
    if (r.promptTokenIds.length >= ctx)
      throw new RangeError(`prompt of ${r.promptTokenIds.length} tokens does not fit the context of ${ctx}`);
  }
  const decoders = requests.map((r) => new SequenceDecoder(tokenizer, r, ctx));
  const caches: KvCache[] = [];
  const promptLogprobs: Array<Array<PromptLogprob | null> | null> = requests.map(() => null);
  const pending: Float32Array[] = []; // logits for each sequence's next token
  let lastYield = performance.now();
  try {
    // Prefill: one forward per distinct prompt, then cloned caches for the sequences that share it.
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => {
      const key = r.promptTokenIds.join(',');
      const g = groups.get(key);
      if (g) g.push(i);
      else groups.set(key, [i]);
    });
    for (const members of groups.values()) {
      const first = requests[members[0]];
      const prompt = first.promptTokenIds;
      const capacity = (i: number) => Math.min(ctx, prompt.length + requests[i].maxTokens);
      const cache = model.newCache(Math.max(...members.map(capacity)));
      const wantPromptLogprobs = members.some((i) => requests[i].promptLogprobs != null);
      const [logits] = model.forward([{ tokens: prompt, cache }], { allLogits: wantPromptLogprobs });
      const V = model.config.vocab;
      const last = wantPromptLogprobs ? logits.subarray((prompt.length - 1) * V) : logits;
      members.forEach((i, j) => {
        caches[i] = j === 0 ? cache : cache.clone();
        pending[i] = last;
        const n = requests[i].promptLogprobs;
        if (n != null) promptLogprobs[i] = computePromptLogprobs(logits, prompt, V, n);
      });
    }

    for (;;) {
      if (options.signal?.aborted) {
        for (const d of decoders) d.abort();
        break;
      }
      const active: number[] = [];
      decoders.forEach((d, i) => {
        if (d.finished) return;
        const event = d.step(pending[i], i);
        options.onToken?.(event);
        if (!d.finished) active.push(i);
      });
      if (active.length === 0) break;
      const logits = model.forward(
        active.map((i) => ({ tokens: [decoders[i].tokens[decoders[i].tokens.length - 1].tokenId], cache: caches[i] })),
      );
      active.forEach((i, j) => (pending[i] = logits[j]));
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await yieldToEventLoop();
        lastYield = performance.now();
      }
    }
  } finally {
    for (const cache of new Set(caches)) cache?.release();
  }
  return decoders.map((d, i) => d.result(promptLogprobs[i]));
}

function computePromptLogprobs(
  allLogits: Float32Array,
  prompt: readonly number[],
  V: number,
  n: number,
): Array<PromptLogprob | null> {
  const out: Array<PromptLogprob | null> = [null];
  for (let t = 1; t < prompt.length; t++) {
    const lp = logSoftmax(allLogits.subarray((t - 1) * V, t * V));
    const id = prompt[t];
    out.push({ tokenId: id, logprob: lp[id], rank: tokenRank(lp, id), top: topTokens(lp, n) });
  }
  return out;
}
