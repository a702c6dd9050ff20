import type { Generator } from './random';

/**
 * Token sampling with vLLM's semantics (docs/contract.md §8.4; vLLM v0.11–v0.15 `SamplingParams`,
 * `v1/sample/sampler.py`, `ops/penalties.py`, `ops/topk_topp_sampler.py`). Order matters and is kept:
 * raw logprobs → allowed_token_ids → bad_words → min_tokens → logit_bias → penalties → greedy | temperature
 * → min_p → top_k → top_p → sample.
 */

export interface SamplingParams {
  /** Default 1. 0 < t < 0.01 is raised to 0.01 (vLLM's _MAX_TEMP), so only t = 0 is greedy in practice. */
  temperature?: number;
  /** Default 1 (off). */
  topP?: number;
  /** 0 or −1 = off. */
  topK?: number;
  /** Default 0 (off). */
  minP?: number;
  /** Default 1 (off). Scope: prompt and output tokens. */
  repetitionPenalty?: number;
  /** Default 0. Scope: output tokens only, proportional to the count. */
  frequencyPenalty?: number;
  /** Default 0. Scope: output tokens only, once per distinct token. */
  presencePenalty?: number;
  /** token id → bias, clamped to [−100, 100]. */
  logitBias?: ReadonlyMap<number, number> | Readonly<Record<string, number>> | null;
  allowedTokenIds?: readonly number[] | null;
  /** Token sequences from {@link badWordsTokenIds}. */
  badWordsTokenIds?: ReadonlyArray<readonly number[]>;
  /** While fewer tokens were generated, stop ids and EOS are masked (even with ignore_eos). */
  minTokens?: number;
  stopTokenIds?: readonly number[];
  /** EOS ids masked by min_tokens. */
  eosTokenIds?: readonly number[];
}

/** Temperatures below this are greedy (vLLM's _SAMPLING_EPS). */
export const GREEDY_EPSILON = 1e-5;
/** Positive temperatures below this are raised to it (vLLM's _MAX_TEMP). */
export const MIN_TEMPERATURE = 1e-2;

export interface ResolvedSamplingParams {
  temperature: number;
  greedy: boolean;
  topP: number;
  topK: number;
  minP: number;
  repetitionPenalty: number;
  frequencyPenalty: number;
  presencePenalty: number;
  logitBias: Array<[number, number]>;
  allowedTokenIds: readonly number[] | null;
  badWordsTokenIds: ReadonlyArray<readonly number[]>;
  minTokens: number;
  /** stop_token_ids ∪ EOS ids: what min_tokens masks. */
  minTokensMasked: number[];
}

/** Applies defaults and vLLM's __post_init__ adjustments. Range validation is the API layer's job (docs/contract.md §8.1). */
export function resolveSamplingParams(p: SamplingParams): ResolvedSamplingParams {
  let temperature = p.temperature ?? 1;
  if (temperature > 0 && temperature < MIN_TEMPERATURE) temperature = MIN_TEMPERATURE;
  const greedy = temperature < GREEDY_EPSILON;
  const bias: Array<[number, number]> = [];
  if (p.logitBias) {
    const entries =
      p.logitBias instanceof Map
        ? [...p.logitBias]
        : Object.entries(p.logitBias).map(([k, v]): [number, number] => [Number(k), v]);
    for (const [id, v] of entries) bias.push([id, Math.min(100, Math.max(-100, v))]);
  }
  const topK = p.topK ?? 0;
  return {
    temperature,
    greedy,
    // Greedy forces the truncation knobs off, as vLLM does.
    topP: greedy ? 1 : (p.topP ?? 1),
    topK: greedy || topK < 0 ? 0 : topK,
    minP: greedy ? 0 : (p.minP ?? 0),
    repetitionPenalty: p.repetitionPenalty ?? 1,
    frequencyPenalty: p.frequencyPenalty ?? 0,
    presencePenalty: p.presencePenalty ?? 0,
    logitBias: bias,
    allowedTokenIds: p.allowedTokenIds ?? null,
    badWordsTokenIds: p.badWordsTokenIds ?? [],
    minTokens: p.minTokens ?? 0,
    minTokensMasked: [...new Set([...(p.stopTokenIds ?? []), ...(p.eosTokenIds ?? [])])],
  };
}

/**
 * vLLM's bad_words encoding: each word bare (leading whitespace stripped) and with one leading space; the
 * spaced variant only when its first token differs from the bare one's and the lengths match.
 */
export function badWordsTokenIds(words: readonly string[], encode: (text: string) => number[]): number[][] {
  const out: number[][] = [];
  for (const word of words) {
    const bare = encode(pythonLstrip(word));
    out.push(bare);
    const spaced = encode(' ' + pythonLstrip(word));
    if (spaced.length > 0 && spaced[0] !== bare[0] && spaced.length === bare.length) out.push(spaced);
  }
  return out;
}

/**
 * Python's `str.lstrip()`: strips what `str.isspace()` calls whitespace. JavaScript's trimStart differs:
 * it strips U+FEFF (not whitespace to Python) and keeps U+001C–U+001F and U+0085 (whitespace to Python).
 */
export function pythonLstrip(text: string): string {
  let i = 0;
  while (i < text.length && PY_WHITESPACE.has(text.charCodeAt(i))) i++;
  return text.slice(i);
}

const PY_WHITESPACE: ReadonlySet<number> = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** Per-sequence token history for penalties, bad words and min_tokens. */
export class SequenceState {
  readonly outputTokenIds: number[] = [];
  private readonly outputCounts = new Map<number, number>();
  private readonly seen: Set<number>; // prompt ∪ output, the repetition-penalty scope

  constructor(promptTokenIds: readonly number[] = []) {
    this.seen = new Set(promptTokenIds);
  }

  append(tokenId: number): void {
    this.outputTokenIds.push(tokenId);
    this.outputCounts.set(tokenId, (this.outputCounts.get(tokenId) ?? 0) + 1);
    this.seen.add(tokenId);
  }

  get promptAndOutputIds(): ReadonlySet<number> {
    return this.seen;
  }

  get outputCountsById(): ReadonlyMap<number, number> {
    return this.outputCounts;
  }
}

/** log_softmax in float64 (step 1: logprobs come from the raw logits, before any processing). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

/**
 * Steps 2–11 on a copy of the logits. Returns the processed logits (masked entries −∞, divided by the
 * temperature unless greedy).
 */
export function processLogits(
  rawLogits: ArrayLike<number>,
  p: ResolvedSamplingParams,
  state: SequenceState,
): Float64Array {
  const V = rawLogits.length;
  // new Float64Array(typedArray) converts natively; Float64Array.from walks an iterator (~10× slower).
  const x = ArrayBuffer.isView(rawLogits) ? new Float64Array(rawLogits as Float32Array) : Float64Array.from(rawLogits);
  const out = state.outputTokenIds;

  // 2. allowed_token_ids
  if (p.allowedTokenIds) {
    const keep = new Uint8Array(V);
    for (const id of p.allowedTokenIds) if (id >= 0 && id < V) keep[id] = 1;
    for (let i = 0; i < V; i++) if (!keep[i]) x[i] = -Infinity;
  }

  // 3. bad_words: the prefix must match the last generated tokens (prompt tokens never count).
  for (const word of p.badWordsTokenIds) {
    const n = word.length;
    if (n === 0) continue;
    const last = word[n - 1];
    if (last < 0 || last >= V) continue;
    if (n === 1) {
      x[last] = -Infinity;
      continue;
    }
    if (out.length < n - 1) continue;
    let match = true;
    for (let j = 0; j < n - 1; j++) {
      if (out[out.length - (n - 1) + j] !== word[j]) {
        match = false;
        break;
      }
    }
    if (match) x[last] = -Infinity;
  }

  // 4. min_tokens
  if (out.length < p.minTokens) {
    for (const id of p.minTokensMasked) if (id >= 0 && id < V) x[id] = -Infinity;
  }

  // 5. logit_bias
  for (const [id, b] of p.logitBias) if (id >= 0 && id < V) x[id] += b;

  // 6. penalties: repetition (prompt ∪ output), then frequency and presence (output only).
  if (p.repetitionPenalty !== 1) {
    const rp = p.repetitionPenalty;
    for (const id of state.promptAndOutputIds) {
      if (id < 0 || id >= V) continue;
      x[id] = x[id] > 0 ? x[id] / rp : x[id] * rp;
    }
  }
  if (p.frequencyPenalty !== 0 || p.presencePenalty !== 0) {
    for (const [id, count] of state.outputCountsById) {
      if (id < 0 || id >= V) continue;
      x[id] -= p.frequencyPenalty * count + p.presencePenalty;
    }
  }

  // 7. greedy: argmax of these logits; temperature and truncation do not apply.
  if (p.greedy) return x;

  // 8. temperature
  if (p.temperature !== 1) for (let i = 0; i < V; i++) x[i] /= p.temperature;

  // 9. min_p: relative to the most likely token's probability.
  if (p.minP > 0) {
    const probs = softmax(x);
    let pmax = 0;
    for (let i = 0; i < V; i++) if (probs[i] > pmax) pmax = probs[i];
    const threshold = p.minP * pmax;
    for (let i = 0; i < V; i++) if (probs[i] < threshold) x[i] = -Infinity;
  }

  // 10. top_k: mask below the k-th largest value; ties with it survive.
  if (p.topK > 0 && p.topK < V) {
    const sorted = new Float64Array(x).sort();
    const kth = sorted[V - p.topK];
    for (let i = 0; i < V; i++) if (x[i] < kth) x[i] = -Infinity;
  }

  // 11. top_p: ascending order, cumulative probability; mask where cumsum ≤ 1 − p, never the largest.
  if (p.topP < 1) maskTopP(x, p.topP);
  return x;
}

/** Index of the largest value, first on ties (torch.argmax). */
export function argmax(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

export function softmax(x: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < x.length; i++) if (x[i] > max) max = x[i];
  const out = new Float64Array(x.length);
  if (max === -Infinity) return out;
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    const e = Math.exp(x[i] - max);
    out[i] = e;
    sum += e;
  }
  for (let i = 0; i < x.length; i++) out[i] /= sum;
  return out;
}

/**
 * Tokens whose processed logit is within this many nats of the largest are walked first when a token is drawn
 * (sampleFromLogits). Any fixed split draws from the same distribution; this one lets an engine that can hand
 * over the head of the distribution far faster than the whole vocabulary (llama.cpp: lib/inference/llama-cpp.ts)
 * decide most draws exactly from the head alone (sampleNextCompact). Tokens below it carry at most e^−10 ≈
 * 4.5·10⁻⁵ of the top token's probability each.
 */
export const SAMPLE_HEAD_NATS = 10;

/**
 * Step 12: draws from softmax(x). vLLM races exponentials (argmax p/q, q ~ Exp(1)), which is multinomial
 * sampling; inverse-CDF sampling draws from the same distribution with one uniform instead of |V|
 * exponentials per token. The walk takes the head (x ≥ max − SAMPLE_HEAD_NATS) in id order, then the rest in
 * id order, so that a draw that lands in the head depends on the head's logits and the normaliser only.
 */
export function sampleFromLogits(x: ArrayLike<number>, rng: Generator): number {
  return drawFromLogits(x, rng.random());
}

function drawFromLogits(x: ArrayLike<number>, u: number): number {
  const probs = softmax(x);
  let max = -Infinity;
  for (let i = 0; i < x.length; i++) if (x[i] > max) max = x[i];
  const cut = max - SAMPLE_HEAD_NATS;
  let cum = 0;
  let last = -1;
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < probs.length; i++) {
      if (probs[i] <= 0 || x[i] < cut !== (pass === 1)) continue;
      cum += probs[i];
      last = i;
      if (u < cum) return i;
    }
  }
  // Rounding can leave cum slightly below 1; the remainder belongs to the last possible token.
  return last >= 0 ? last : argmax(x);
}

export interface TokenLogprob {
  tokenId: number;
  logprob: number;
}

export interface SampleResult {
  tokenId: number;
  /** Raw-logit log-probability of the sampled token. */
  logprob: number;
  /** 1 + number of other tokens with a logprob ≥ this one's (vLLM counts ≥, so ties rank worse). */
  rank: number;
  /** docs/contract.md §8.8's list: the sampled token first unless it is rank 1, then tokens by rank; `topLogprobs` entries. */
  topLogprobs: TokenLogprob[];
  /** The `topLogprobs` most likely tokens, best first, whether or not the sampled one is among them. */
  ranked: TokenLogprob[];
}

/** Runs the whole pipeline for one sequence and one step. */
export function sampleNext(
  rawLogits: ArrayLike<number>,
  params: ResolvedSamplingParams,
  state: SequenceState,
  rng: Generator,
  topLogprobs = 0,
): SampleResult {
  const x = processLogits(rawLogits, params, state);
  let tokenId: number;
  if (params.greedy) tokenId = argmax(x);
  else tokenId = sampleFromLogits(x, rng);
  // Everything masked (the API refuses the static cases — allowed_token_ids all masked by min_tokens —, but
  // a multi-token bad word or a grammar can still mask the rest): take the most likely token that
  // allowed_token_ids permits (the raw argmax without that list) instead of failing mid-stream.
  if (x[tokenId] === -Infinity) tokenId = fallbackToken(rawLogits, params.allowedTokenIds);
  // Only the log-normaliser is needed unless top logprobs are asked for (one exp pass, no |V| array); the
  // rank counts raw logits ≥ the token's, the same order as logprobs.
  if (topLogprobs > 0) {
    const lp = logSoftmax(rawLogits);
    const ranked = topTokens(lp, topLogprobs);
    return {
      tokenId,
      logprob: lp[tokenId],
      rank: tokenRank(lp, tokenId),
      topLogprobs: sampledFirstOf(ranked, tokenId, lp[tokenId], topLogprobs),
      ranked,
    };
  }
  let max = -Infinity;
  for (let i = 0; i < rawLogits.length; i++) if (rawLogits[i] > max) max = rawLogits[i];
  let sum = 0;
  for (let i = 0; i < rawLogits.length; i++) sum += Math.exp(rawLogits[i] - max);
  const lse = max + Math.log(sum);
  return {
    tokenId,
    logprob: rawLogits[tokenId] - lse,
    rank: tokenRank(rawLogits, tokenId),
    topLogprobs: [],
    ranked: [],
  };
}

function fallbackToken(rawLogits: ArrayLike<number>, allowed: readonly number[] | null): number {
  if (!allowed) return argmax(rawLogits);
  let best = -1;
  for (const id of allowed) {
    if (id < 0 || id >= rawLogits.length) continue;
    if (best === -1 || rawLogits[id] > rawLogits[best] || (rawLogits[id] === rawLogits[best] && id < best)) best = id;
  }
  return best === -1 ? argmax(rawLogits) : best;
}

export function tokenRank(logprobs: ArrayLike<number>, tokenId: number): number {
  const v = logprobs[tokenId];
  let rank = 0;
  for (let i = 0; i < logprobs.length; i++) if (logprobs[i] >= v) rank++;
  return rank;
}

/** The n most likely tokens, best first; equal logprobs in id order. */
export function topTokens(logprobs: ArrayLike<number>, n: number): TokenLogprob[] {
  const V = logprobs.length;
  const k = Math.min(n, V);
  if (k <= 0) return [];
  const top: TokenLogprob[] = [];
  for (let i = 0; i < V; i++) {
    const v = logprobs[i];
    if (top.length === k && !(v > top[k - 1].logprob)) continue;
    let at = top.length;
    while (at > 0 && v > top[at - 1].logprob) at--;
    top.splice(at, 0, { tokenId: i, logprob: v });
    if (top.length > k) top.pop();
  }
  return top;
}

/**
 * vLLM's top_logprobs quirk (docs/contract.md §8.8): the first n entries of [sampled, ranked tokens without the sampled
 * one]. Exactly top-1..n when the sampled token is rank 1, else [sampled, top-1, …, top-(n−1)].
 */
export function sampledFirstTopLogprobs(logprobs: ArrayLike<number>, sampledId: number, n: number): TokenLogprob[] {
  return sampledFirstOf(topTokens(logprobs, n), sampledId, logprobs[sampledId], n);
}

function sampledFirstOf(
  ranked: readonly TokenLogprob[],
  sampledId: number,
  logprob: number,
  n: number,
): TokenLogprob[] {
  if (n <= 0) return [];
  const others = ranked.filter((t) => t.tokenId !== sampledId);
  return [{ tokenId: sampledId, logprob }, ...others].slice(0, n);
}

const TOP_P_BUCKETS = 4096;

/**
 * top_p without sorting the vocabulary: token masses go into value buckets, whole buckets below the cut
 * are masked, and only the bucket where the cumulative mass crosses 1 − p is sorted. Same result as
 * walking all tokens in ascending (value, −id) order — ties at the cut are masked highest id first —
 * except that the mass below that bucket is summed per bucket (rounding only). ~100× cheaper than an id
 * sort with a JS comparator on a 150k-token vocabulary.
 */
function maskTopP(x: Float64Array, topP: number): void {
  const V = x.length;
  let max = -Infinity;
  let min = Infinity;
  let finite = 0;
  for (let i = 0; i < V; i++) {
    const v = x[i];
    if (v === -Infinity) continue;
    finite++;
    if (v > max) max = v;
    if (v < min) min = v;
  }
  if (finite <= 1) return;
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(x[i] - max);
  const target = 1 - topP;
  const range = max - min;
  const scale = range > 0 ? TOP_P_BUCKETS / range : 0;
  const bucketOf = (v: number) => Math.min(TOP_P_BUCKETS - 1, Math.floor((v - min) * scale));
  const mass = new Float64Array(TOP_P_BUCKETS);
  const count = new Int32Array(TOP_P_BUCKETS);
  for (let i = 0; i < V; i++) {
    const v = x[i];
    if (v === -Infinity) continue;
    const b = bucketOf(v);
    mass[b] += Math.exp(v - max) / sum;
    count[b]++;
  }
  let cum = 0;
  let seen = 0; // finite tokens masked so far
  let b = 0;
  for (; b < TOP_P_BUCKETS; b++) {
    // A whole bucket goes when its mass keeps the sum under the target and the top token is not in it.
    if (cum + mass[b] <= target && seen + count[b] < finite) {
      cum += mass[b];
      seen += count[b];
    } else break;
  }
  if (b === TOP_P_BUCKETS) return;
  const values: number[] = [];
  for (let i = 0; i < V; i++) if (x[i] !== -Infinity && bucketOf(x[i]) === b) values.push(x[i]);
  values.sort((u, w) => u - w);
  let masked = 0;
  for (let r = 0; r < values.length && seen + masked < finite - 1; r++) {
    cum += Math.exp(values[r] - max) / sum;
    if (cum <= target) masked++;
    else break;
  }
  // Everything below bucket b goes, then the first `masked` (value-ordered) tokens of bucket b.
  if (masked === 0) {
    if (b === 0) return;
    for (let i = 0; i < V; i++) if (x[i] !== -Infinity && bucketOf(x[i]) < b) x[i] = -Infinity;
    return;
  }
  const cut = values[masked - 1];
  let ties = 0;
  for (let r = masked - 1; r >= 0 && values[r] === cut; r--) ties++;
  for (let i = 0; i < V; i++) if (x[i] < cut) x[i] = -Infinity;
  for (let i = V - 1; i >= 0 && ties > 0; i--) {
    if (x[i] === cut) {
      x[i] = -Infinity;
      ties--;
    }
  }
}

/**
 * The head of one next-token distribution, as an engine that cannot hand over every logit cheaply reads it
 * (llama.cpp: lib/inference/llama-cpp.ts): every token whose raw logit is ≥ `floor` (ids and raw logits, largest
 * first; possibly fewer when the head is very wide, with `floor` then the logit of the first token left out), and the
 * softmax normalisers of the whole vocabulary at temperature 1 and at the request's temperature.
 */
export interface CompactLogits {
  readonly kind: 'compact';
  /** Token ids, largest logit first; every token of the vocabulary with a raw logit above `floor`. */
  readonly ids: Int32Array;
  /** Their raw logits (float32 values), in the same order. */
  readonly logits: Float64Array;
  /** Every token NOT listed has a raw logit ≤ this, and below every listed one. */
  readonly floor: number;
  /** Σ over the vocabulary of exp(logit − max logit). */
  readonly z1: number;
  /**
   * Σ over the vocabulary of exp(logit / T − max logit / T), T the temperature the read was made for; null where the
   * engine did not read it (T < 1: the unread tokens' weight at T is then bounded from z1, see unreadWeight).
   */
  readonly zT: number | null;
  readonly vocab: number;
}

/**
 * How far (relative) the engine's normaliser may be from the float64 sum over the same logits. llama.cpp sums |V|
 * float32 terms one after the other; their rounding errors add up like a random walk, about √|V| · 2⁻²⁴ (2·10⁻⁵ at
 * Qwen3's 151,936 tokens): eight times that is allowed. Where the unread tokens' weight matters, a draw or a top_p
 * cut that this much could move is not decided from the head (the caller reads every logit instead).
 */
function normaliserTolerance(vocab: number): number {
  return 8 * Math.sqrt(vocab) * 2 ** -24;
}

/**
 * Whether `sampleNextCompact` may be tried for these params at all: sampling with nothing but temperature, min_p,
 * top_k and top_p (which keep the order of the raw logits), no grammar. Everything else needs the whole row.
 */
export function compactSamplingApplies(p: ResolvedSamplingParams, outputLength: number): boolean {
  if (p.greedy || p.allowedTokenIds || p.badWordsTokenIds.length || p.logitBias.length) return false;
  if (outputLength < p.minTokens) return false;
  return p.repetitionPenalty === 1 && p.frequencyPenalty === 0 && p.presencePenalty === 0;
}

/**
 * sampleNext on the head of the distribution (see CompactLogits), for params where compactSamplingApplies, with
 * the step's uniform draw `u` given: the same token, rank and top list as sampleNext on the full row with the same
 * draw (logprobs up to the engine's float32 normaliser), or null when the head does not decide it — the draw lands
 * beyond the head or within the normaliser's tolerance of an interval's edge, or min_p / top_k / top_p / the top
 * list reach below `floor`. The caller then reads the full row. Ties at the cut and float32 rounding of the
 * engine's normalisers are handled as in the full row: the walk order (head in id order, then the rest) and the
 * masks are the full row's.
 */
export function sampleNextCompact(
  read: CompactLogits,
  p: ResolvedSamplingParams,
  u: number,
  topLogprobs = 0,
): SampleResult | null {
  const { ids, logits: raw } = read;
  const m = ids.length;
  if (m === 0 || topLogprobs > m) return null;
  // Greedy (logitNeed's `k`): the engine read the top k + 1 logits, or the argmax alone for k = 0.
  if (p.greedy) return headResult(read, firstLargest(read), topLogprobs);
  const T = p.temperature;
  // Processed logits of the head, as processLogits computes them (float64 of the float32 logit, divided by T).
  const x = new Float64Array(m);
  for (let j = 0; j < m; j++) x[j] = T !== 1 ? raw[j] / T : raw[j];
  const maxX = x[0];
  const floorX = read.floor / T;
  const e = new Float64Array(m);
  let headSum = 0;
  for (let j = 0; j < m; j++) headSum += e[j] = Math.exp(x[j] - maxX);
  // The unread tokens' weight at T (relative to the largest token's), as an interval. The draw and top_p are decided
  // only where every value in it gives the same answer; once a mask drops every unread token it is 0.
  const rest = unreadWeight(read, T, headSum);
  if (!rest) return null;
  let [restLo, restHi] = rest;
  // 9. min_p: processLogits masks probs < min_p · p_max, i.e. weights exp(x − max) < min_p.
  if (p.minP > 0) {
    if (!(maxX + Math.log(p.minP) > floorX)) return null;
    for (let j = 0; j < m; j++) if (e[j] < p.minP) x[j] = -Infinity;
    restLo = restHi = 0;
  }
  // 10. top_k: the k-th largest of the vocabulary is the head's k-th (every token ≥ it was read; x stays sorted,
  // min_p masked a tail).
  if (p.topK > 0 && p.topK < read.vocab) {
    if (p.topK > m) return null;
    const kth = x[p.topK - 1];
    for (let j = 0; j < m; j++) if (x[j] < kth) x[j] = -Infinity;
    restLo = restHi = 0;
  }
  // 11. top_p: the ascending walk masks the unread tokens first (all below the head); it must mask them all. How
  // many head tokens it masks then may depend on where the unread weight lies in its interval: the draw is made
  // for each of those counts, and decides only if they all pick the same token.
  if (p.topP < 1) {
    const cuts = headTopPCuts(x, e, ids, restLo, restHi, 1 - p.topP);
    if (!cuts) return null;
    let chosen = -1;
    for (let k = cuts.fewest; k <= cuts.most; k++) {
      const masked = Float64Array.from(x);
      for (let r = 0; r < k; r++) masked[cuts.ascending[r]] = -Infinity;
      const pick = drawHead(masked, e, ids, maxX, 0, 0, floorX, u);
      if (pick === null || (chosen >= 0 && pick !== chosen)) return null;
      chosen = pick;
    }
    return headResult(read, chosen, topLogprobs);
  }
  const chosen = drawHead(x, e, ids, maxX, restLo, restHi, floorX, u);
  if (chosen === null) return null;
  return headResult(read, chosen, topLogprobs);
}

/**
 * The unread tokens' weight at temperature T, relative to the largest token's, as an interval [lo, hi]; null where
 * the read cannot bound it. With zT read: the engine's float32 sum less the head's (`headSum`, at T), within its
 * tolerance, and at most (unread count) × the weight of the floor.
 *
 * Without it (T < 1, where llama.cpp's temperature read cost more than the other two reads together): each unread
 * token's weight at T is w^(1/T), w its weight at temperature 1, below the floor's w_f. The unread weight at 1, S, is
 * z1 less the head's (within z1's tolerance); then Σ w^(1/T) ≤ S · w_f^(1/T − 1) (each w^(1/T − 1) ≤ w_f^(1/T − 1)),
 * and ≥ n · (S / n)^(1/T) for n unread tokens (w^(1/T) is convex: Jensen). Tokens below the head matter little at
 * T < 1, so the interval is narrow where the head is deep; where it still leaves the draw open, the engine reads zT.
 */
function unreadWeight(read: CompactLogits, T: number, headSum: number): [number, number] | null {
  const { logits: raw, vocab } = read;
  const m = raw.length;
  const n = vocab - m;
  const floorWeight = Math.exp(read.floor - raw[0]);
  // Every unread token's weight at T is at most the floor's.
  const unreadAtMost = n * Math.exp((read.floor - raw[0]) / T);
  const zT = read.zT ?? (T === 1 ? read.z1 : null);
  if (zT !== null) {
    const slack = normaliserTolerance(vocab) * zT;
    const lo = Math.max(0, zT - headSum - slack);
    return [lo, Math.max(lo, Math.min(unreadAtMost, Math.max(0, zT - headSum + slack)))];
  }
  if (!(T < 1)) return null;
  let head1 = 0;
  for (let j = 0; j < m; j++) head1 += Math.exp(raw[j] - raw[0]);
  const slack = normaliserTolerance(vocab) * read.z1;
  const lo1 = Math.max(0, read.z1 - head1 - slack);
  const hi1 = Math.max(lo1, Math.min(n * floorWeight, Math.max(0, read.z1 - head1 + slack)));
  const hi = Math.min(hi1 * floorWeight ** (1 / T - 1), unreadAtMost);
  const lo = n > 0 ? n * (lo1 / n) ** (1 / T) : 0;
  return [Math.min(lo, hi), hi];
}

/**
 * 12. The draw, as drawFromLogits: the normaliser sums the kept tokens in id order (masked entries add 0), and the
 * walk takes the head (x ≥ max − SAMPLE_HEAD_NATS) in id order, then the other kept tokens in id order. The listed
 * token drawn, or null where the head does not decide it.
 */
function drawHead(
  x: Float64Array,
  e: Float64Array,
  ids: Int32Array,
  maxX: number,
  restLo: number,
  restHi: number,
  floorX: number,
  u: number,
): number | null {
  const m = ids.length;
  const byId = [...Array(m).keys()].filter((j) => x[j] !== -Infinity).sort((a, b) => ids[a] - ids[b]);
  // Every kept token was read: drawFromLogits itself on them in id order (what it skips, masked entries, adds 0 to
  // the full row's sums), the full row's walk bit for bit.
  if (restHi === 0)
    return byId[
      drawFromLogits(
        Float64Array.from(byId, (j) => x[j]),
        u,
      )
    ];
  let kept = 0;
  for (const j of byId) kept += e[j];
  const cut = maxX - SAMPLE_HEAD_NATS;
  // Unread tokens are kept: the head must have been read whole, and the draw must land in it, inside its token's
  // interval for every value the unread weight may take (an interval's edges move with it).
  if (!(cut > floorX)) return null;
  const sum = kept + restLo;
  let weight = 0;
  let cum = 0;
  for (const j of byId) {
    if (x[j] < cut) continue;
    const before = weight;
    weight += e[j];
    cum += e[j] / sum;
    if (u < cum) return u >= before / (kept + restLo) && u < weight / (kept + restHi) ? j : null;
  }
  // Beyond the head: the full row's walk goes on through tokens not read.
  return null;
}

/** The listed token with the largest logit, the lowest id among ties (argmax's pick; the binding's sort is unstable). */
function firstLargest({ ids, logits }: CompactLogits): number {
  let best = 0;
  for (let j = 1; j < ids.length && logits[j] === logits[0]; j++) if (ids[j] < ids[best]) best = j;
  return best;
}

/** SampleResult for the listed token at `chosen`: logprob from the normaliser, rank and top list from the head. */
function headResult(read: CompactLogits, chosen: number, topLogprobs: number): SampleResult {
  const { ids, logits: raw } = read;
  const m = ids.length;
  const tokenId = ids[chosen];
  const lse1 = raw[0] + Math.log(read.z1);
  const logprob = raw[chosen] - lse1;
  // Every token with a logit ≥ the chosen one's was read, so are the top `topLogprobs` (ties included).
  let rank = 0;
  for (let j = 0; j < m; j++) if (raw[j] >= raw[chosen]) rank++;
  if (topLogprobs <= 0) return { tokenId, logprob, rank, topLogprobs: [], ranked: [] };
  const ranked = [...Array(m).keys()]
    .sort((a, b) => raw[b] - raw[a] || ids[a] - ids[b])
    .slice(0, topLogprobs)
    .map((j) => ({ tokenId: ids[j], logprob: raw[j] - lse1 }));
  return { tokenId, logprob, rank, topLogprobs: sampledFirstOf(ranked, tokenId, logprob, topLogprobs), ranked };
}

/**
 * top_p on the read head: maskTopP's ascending walk (ties: the highest id first) masks while the cumulative
 * probability stays ≤ 1 − p, never the largest token. The unread tokens (weight in [restLo, restHi], all below the
 * head) come first and must all be masked. The cumulative share grows with the unread weight, so the walk masks the
 * most head tokens at restLo and the fewest at restHi: the true count lies between. Null when the unread tokens may
 * survive.
 */
function headTopPCuts(
  x: Float64Array,
  e: Float64Array,
  ids: Int32Array,
  restLo: number,
  restHi: number,
  target: number,
): { ascending: number[]; fewest: number; most: number } | null {
  const ascending = [...Array(x.length).keys()].filter((j) => x[j] !== -Infinity);
  let total = 0;
  for (const j of ascending) total += e[j];
  if (restHi > 0 && !(restHi / (total + restHi) <= target)) return null;
  ascending.sort((a, b) => x[a] - x[b] || ids[b] - ids[a]);
  const masked = (rest: number) => {
    let below = 0;
    let k = 0;
    for (; k < ascending.length - 1; k++) {
      below += e[ascending[k]];
      if (!((rest + below) / (total + rest) <= target)) break;
    }
    return k;
  };
  return { ascending, fewest: masked(restHi), most: masked(restLo) };
}
