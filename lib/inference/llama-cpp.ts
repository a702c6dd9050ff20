import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import type { LogitNeed, LogitRow } from '@/lib/engine/generate';
import { SAMPLE_HEAD_NATS, type CompactLogits } from '@/lib/engine/sampler';

/**
 * llama.cpp (node-llama-cpp's prebuilt CPU binding) as the forward pass of a Hugging Face model, with OUR sampler,
 * stop rules, grammars and logprobs on its logits (lib/engine/generate.ts's SequenceDecoder, through the scheduler).
 *
 * Why not node-llama-cpp's own sampling: its chain (top-k → top-p → min-p → temperature, llama.cpp's RNG) is not
 * vLLM's pipeline, so seeded answers, logprobs and the differential tests would change. Why not always the full
 * logits: the binding hands them to JavaScript as an array of 2·|V| numbers built element by element on the
 * main thread — measured (docs/engine/llama-cpp.md) at 17 ms a step for SmolLM2's 49,152 tokens, more than the
 * forward pass. So each step asks for what decides it exactly (SequenceDecoder.logitNeed), and hands the sampler
 * a CompactLogits (lib/engine/sampler.ts's sampleNextCompact) where that suffices:
 *
 * - `need = k` (greedy, no processor that reorders the vocabulary): the greedy sampler's pick and `totalLogitWeight`
 *   = Σ exp(logit − max) from a read that lists no logit (k = 0), or the head below (k > 0) when it holds k tokens,
 *   else the top k + 1 logits (`includeTop`, a sort of the vocabulary); where the last two of those tie (a rank could
 *   depend on tokens not returned), the same step reads the full logits before the next batch.
 * - a SampledNeed (temperature, top_p, top_k, min_p only): the head of the distribution (`head`) and the normaliser at
 *   temperature 1, concurrent reads, and the normaliser at T beside them at T > 1, or after them at T < 1 where the
 *   bound sampleNextCompact derives from z1 leaves the draw open; the need's `decides` says, before the next batch,
 *   whether they decide this step's draw, else the step reads the full logits.
 * - `need = null` (penalties, biases, grammars, min_tokens): the full logits.
 *
 * Sequences are llama.cpp context sequences (a fixed number of slots); a cache is one slot. A clone (n > 1
 * choices sharing a prompt) takes a slot and replays the source's tokens on its first forward.
 *
 * Pinned to node-llama-cpp 3.22.x: it uses the sequence's `_decodeTokens` and the addon's `sampleToken` (the
 * public `controlledEvaluate` builds a sorted Map of every logit: 3–4× slower still). tests/inference/llama-cpp.test.ts
 * fails if either changes.
 */

export type { LogitNeed };

export interface LlamaCppModelOptions {
  /** Concurrent sequences (context slots). */
  slots: number;
  /** Context length per sequence. */
  ctx: number;
  /** Rows of the output matrix (the Hugging Face config's vocab_size): the length of a logits row. */
  vocab: number;
  threads?: number;
  /** Prefill batch size (tokens per decode call). */
  batchSize?: number;
  /**
   * A llama.cpp LoRA adapter file (lib/engine/hf/gguf-lora.ts) applied to every sequence at run time, at scale 1
   * (the file's alpha carries PEFT's scale).
   */
  lora?: string;
  /**
   * Sampled steps read the head of the distribution when it decides the draw (default), else every logit; false
   * reads every logit always (the tests' reference for the head's exactness).
   */
  compactSampling?: boolean;
}

interface AddonSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}
type SampleResult = [number, unknown, unknown, (number | Token)[] | undefined, number | undefined];
interface AddonContext {
  sampleToken(
    batchLogitIndex: number,
    sampler: AddonSampler,
    probabilities: boolean,
    confidence: boolean,
    logits: boolean | [Token[], boolean, boolean, boolean, number],
    totalLogitWeight: boolean,
  ): Promise<SampleResult>;
}
interface SequenceInternals {
  _decodeTokens(
    tokens: Token[],
    logits: (true | undefined)[],
    priority: number,
    tokenMeter: undefined,
    contextShift: { size: number; strategy: string },
    mapper: (batchLogitIndex: number, tokenIndex: number) => Promise<LogitRow>,
  ): Promise<LogitRow[]>;
}

/**
 * Greedy and nothing else: the candidates keep every token's raw logit, in id order, and the selected one is the
 * first largest (the lowest id on a tie, as our argmax).
 */
const GREEDY = { temperature: 0 };
/** The binding's listed logits, `[id, logit, id, logit, …]`, as CompactLogits' arrays. */
function unpairs(pairs: readonly number[]): { ids: Int32Array; logits: Float64Array } {
  const m = pairs.length / 2;
  const ids = new Int32Array(m);
  const logits = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    ids[j] = pairs[2 * j];
    logits[j] = pairs[2 * j + 1];
  }
  return { ids, logits };
}
/** The head is read this much deeper than SAMPLE_HEAD_NATS · T, for float32 rounding of llama.cpp's cut. */
const HEAD_MARGIN_NATS = 0.05;
export class LlamaCppCache {
  /** Tokens a clone must replay before its own (its source's history at clone time). */
  replay: number[] = [];
  /** Every token in this sequence's KV cache, in order. */
  readonly history: number[] = [];
  released = false;
  constructor(
    private readonly owner: LlamaCppModel,
    readonly sequence: LlamaContextSequence,
  ) {}
  get length(): number {
    return this.history.length + this.replay.length;
  }
  clone(): LlamaCppCache {
    const copy = this.owner.newCache();
    copy.replay = [...this.history, ...this.replay];
    return copy;
  }
  release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.freeSlot(this);
  }
}

export class LlamaCppModel {
  readonly config: { ctx: number; vocab: number };
  private readonly free: LlamaContextSequence[] = [];
  /** Each sequence's place in creation order (llama.cpp's sequence id; the binding keeps its own private). */
  private readonly slotIndex = new Map<LlamaContextSequence, number>();
  private slotOf(seq: LlamaContextSequence): number {
    return this.slotIndex.get(seq)!;
  }
  /**
   * Idle greedy samplers. One per call in flight: the addon's sampler keeps the candidates array it fills, so two
   * rows read concurrently through one sampler (the binding reads them on its thread pool) overwrite each other.
   */
  private readonly samplers: AddonSampler[] = [];
  private readonly newSampler: () => AddonSampler;
  private readonly addon: AddonContext;
  /** Steps that fell back from a partial read to the full logits (a tie at the cut, a draw beyond the head). */
  fallbacks = 0;
  /** Sampled steps decided by the head of the distribution (for the tests and the benchmark). */
  headReads = 0;
  /** Sampled steps at T < 1 whose normaliser at T had to be read (its bound from z1 left the draw open). */
  temperatureReads = 0;
  private readonly compactSampling: boolean;

  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly slots: number,
    ctx: number,
    vocab: number,
    compactSampling: boolean,
  ) {
    this.config = { ctx, vocab };
    this.compactSampling = compactSampling;
    for (let i = 0; i < slots; i++) {
      const seq = context.getSequence();
      this.slotIndex.set(seq, i);
      this.free.push(seq);
    }
    const internals = context as unknown as {
      _ctx: AddonContext;
      _llama: { _bindings: { AddonSampler: new (m: unknown) => AddonSampler } };
    };
    this.addon = internals._ctx;
    const Sampler = internals._llama._bindings.AddonSampler;
    const native = (model as unknown as { _model: unknown })._model;
    this.newSampler = () => {
      const sampler = new Sampler(native);
      return sampler;
    };
  }

  /** Opens a GGUF file; the error names the file and llama.cpp's reason when it cannot be loaded. */
  static async open(llama: Llama, ggufPath: string, options: LlamaCppModelOptions): Promise<LlamaCppModel> {
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: ggufPath, gpuLayers: 0 });
    } catch (err) {
      throw new Error(`llama.cpp cannot load ${ggufPath}: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      const context = await model.createContext({
        sequences: options.slots,
        contextSize: options.ctx * options.slots,
        batchSize: options.batchSize ?? 512,
        threads: options.threads ?? 1,
        ...(options.lora ? { lora: { adapters: [{ filePath: options.lora, scale: 1 }] } } : {}),
      });
      return new LlamaCppModel(
        model,
        context,
        options.slots,
        options.ctx,
        options.vocab,
        options.compactSampling ?? true,
      );
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  freeSlots(): number {
    return this.free.length;
  }

  newCache(): LlamaCppCache {
    if (this.free.length === 0) throw new Error(`all ${this.slots} llama.cpp sequences are in use`);
    // The lowest free sequence id, not the last released one: llama.cpp's numbers for a batch of several sequences
    // depend (in the last bits) on which sequence ids share it, so a seeded request run twice must get the same
    // slots to draw the same answer (tests/inference/llama-cpp.test.ts, "the same slots").
    let at = 0;
    for (let i = 1; i < this.free.length; i++) if (this.slotOf(this.free[i]) < this.slotOf(this.free[at])) at = i;
    const [seq] = this.free.splice(at, 1);
    return new LlamaCppCache(this, seq);
  }

  /** @internal LlamaCppCache.release: the slot's KV cells are cleared before anyone can take it again. */
  freeSlot(cache: LlamaCppCache): void {
    void cache.sequence.clearHistory().then(
      () => this.free.push(cache.sequence),
      () => undefined,
    );
  }

  /**
   * One batched step: every input's tokens are appended to its sequence (node-llama-cpp puts concurrent
   * sequences' tokens in one llama_decode), and each input's next-token row comes back as `needs[i]` asks (see the
   * file comment): a full-vocabulary row, or for a sampled need the head of the distribution that decides it.
   */
  forwardAsync(
    inputs: { tokens: ArrayLike<number>; cache: LlamaCppCache }[],
    needs: (number | null)[],
  ): Promise<Float32Array[]>;
  forwardAsync(inputs: { tokens: ArrayLike<number>; cache: LlamaCppCache }[], needs: LogitNeed[]): Promise<LogitRow[]>;
  async forwardAsync(
    inputs: { tokens: ArrayLike<number>; cache: LlamaCppCache }[],
    needs: LogitNeed[],
  ): Promise<LogitRow[]> {
    return Promise.all(inputs.map(async (input, i) => (await this.decode(input, needs[i], false))[0]));
  }

  /** A prefill of one input with one full row per new token (prompt logprobs), joined: tokens × vocabulary. */
  async forwardAll(input: { tokens: ArrayLike<number>; cache: LlamaCppCache }): Promise<Float32Array> {
    const rows = (await this.decode(input, null, true)) as Float32Array[];
    const V = this.config.vocab;
    const joined = new Float32Array(rows.length * V);
    rows.forEach((r, j) => joined.set(r, j * V));
    return joined;
  }

  private async decode(
    { tokens, cache }: { tokens: ArrayLike<number>; cache: LlamaCppCache },
    need: LogitNeed,
    allLogits: boolean,
  ): Promise<LogitRow[]> {
    if (cache.released) throw new Error('the sequence was released');
    const own = Array.from(tokens);
    const all = [...cache.replay, ...own];
    if (cache.history.length + all.length > this.config.ctx)
      throw new RangeError(`${cache.history.length + all.length} tokens do not fit the context of ${this.config.ctx}`);
    const flags = all.map((_, j) =>
      j === all.length - 1 || (allLogits && j >= cache.replay.length) ? true : undefined,
    );
    const seq = cache.sequence as unknown as SequenceInternals;
    const rows = await seq._decodeTokens(
      all as Token[],
      flags,
      3,
      undefined,
      { size: 1, strategy: 'eraseBeginning' },
      (batchLogitIndex) => this.row(batchLogitIndex, need),
    );
    cache.history.push(...all);
    cache.replay = [];
    if (!allLogits) return [rows[all.length - 1]];
    // Rows for the own tokens (a replay's positions belong to the clone's source, already scored).
    return rows.slice(all.length - own.length);
  }

  /** The next-token row at a batch position; runs before the next llama_decode overwrites it. */
  private async row(batchLogitIndex: number, need: LogitNeed): Promise<LogitRow> {
    if (need !== null && typeof need === 'object' && this.compactSampling) {
      const T = need.temperature;
      let read = await this.head(batchLogitIndex, T);
      let decided = read !== null && need.decides(read);
      if (read && !decided && read.zT === null) {
        // The unread tokens' weight, bounded from z1, left this draw open: read the normaliser at T, and ask again.
        this.temperatureReads++;
        const zT = await this.normaliser(batchLogitIndex, { temperature: T, seed: 0 });
        if (zT !== undefined) {
          read = { ...read, zT };
          decided = need.decides(read);
        }
      }
      if (read && decided) {
        this.headReads++;
        return read;
      }
      this.fallbacks++;
      return this.withSampler((s) => this.fullRow(s, batchLogitIndex));
    }
    if (typeof need === 'number') return this.greedyRow(batchLogitIndex, need);
    return this.withSampler((s) => this.fullRow(s, batchLogitIndex));
  }

  private async withSampler<T>(
    read: (sampler: AddonSampler) => Promise<T>,
    config?: Record<string, unknown>,
  ): Promise<T> {
    const sampler = this.samplers.pop() ?? this.newSampler();
    try {
      // The pool's samplers are greedy unless a read asks otherwise (applyConfig rebuilds the chain on a change).
      sampler.applyConfig(config ?? GREEDY);
      return await read(sampler);
    } finally {
      this.samplers.push(sampler);
    }
  }

  /**
   * A greedy step (need = k). k = 0: the greedy sampler's pick and Σ exp(logit − max) from one read that lists no
   * logit, as a CompactLogits of the argmax alone at logit 0 (sampleNextCompact takes nothing from it but differences
   * to the largest); listing the pick cost the binding a |V|-long copy and search (0.44 against 0.31 ms a step at
   * 49,152 tokens). k > 0: the head of the distribution as a sampled step at T = 1 reads it (every token within 10
   * nats of the largest, and z1), when it lists k tokens or more; else the top k + 1 logits, a read that sorts the
   * whole vocabulary (4 ms at 49,152 tokens, against 0.45 for the head), and every logit where its last two tie (a
   * rank could depend on tokens not returned).
   */
  private async greedyRow(batchLogitIndex: number, k: number): Promise<LogitRow> {
    const V = this.config.vocab;
    if (k === 0) {
      const [token, total] = await this.withSampler(async (s) => {
        const [picked, , , , z] = await this.addon.sampleToken(batchLogitIndex, s, false, false, false, true);
        return [picked, z] as const;
      });
      if (token >= 0 && total !== undefined)
        return {
          kind: 'compact',
          ids: Int32Array.of(token),
          logits: Float64Array.of(0),
          floor: 0,
          z1: total,
          zT: total,
          vocab: V,
        };
    } else {
      const read = await this.head(batchLogitIndex, 1);
      if (read && read.ids.length >= k) return read;
    }
    return this.withSampler(async (sampler) => {
      const filter: [Token[], boolean, boolean, boolean, number] = [[], false, false, false, k + 1];
      const [, , , pairs, total] = await this.addon.sampleToken(batchLogitIndex, sampler, false, false, filter, true);
      const listed = pairs as number[] | undefined;
      const m = (listed?.length ?? 0) / 2;
      if (listed && total !== undefined && m >= 1 && !(m >= 2 && listed[2 * m - 1] === listed[2 * m - 3])) {
        const { ids, logits } = unpairs(listed);
        return { kind: 'compact', ids, logits, floor: logits[m - 1], z1: total, zT: total, vocab: V };
      }
      this.fallbacks++;
      return this.fullRow(sampler, batchLogitIndex);
    });
  }

  /** Σ exp((logit − max) / T) over the vocabulary, T the config's temperature (0: 1), from a read that lists no logit. */
  private normaliser(batchLogitIndex: number, config: Record<string, unknown>): Promise<number | undefined> {
    return this.withSampler(async (s) => {
      const [, , , , total] = await this.addon.sampleToken(batchLogitIndex, s, false, false, false, true);
      return total;
    }, config);
  }

  private async fullRow(sampler: AddonSampler, batchLogitIndex: number): Promise<Float32Array> {
    const V = this.config.vocab;
    const [, , , pairs] = await this.addon.sampleToken(batchLogitIndex, sampler, false, false, true, false);
    if (!pairs || pairs.length !== 2 * V) throw new Error(`llama.cpp returned ${pairs?.length ?? 0} logits for ${V}`);
    const row = new Float32Array(V);
    for (let i = 0; i < pairs.length; i += 2) row[pairs[i] as number] = pairs[i + 1] as number;
    return row;
  }

  /**
   * The head of a sampled step's distribution (CompactLogits), read in concurrent binding calls, each a pass over the
   * vocabulary in native code with no sort of it: the tokens within SAMPLE_HEAD_NATS · T (+ a margin) of the largest
   * logit (llama.cpp's min_p sampler keeps logit ≥ max + ln p, unsorted; the binding then sorts only those), and
   * Σ exp(logit − max) at temperature 1 (the greedy read of the normaliser). At T > 1 the normaliser at T is read
   * beside them (its temperature sampler divides the logits first); at T = 1 it is z1; below 1 it is left out (zT
   * null): sampleNextCompact bounds the unread tokens' weight at T from z1 (their share shrinks with T), and `row`
   * reads it only where that leaves the draw open. It cost more than the other two reads together (0.70 ms a step
   * at 49,152 tokens: the temperature pass, then its dist sampler's softmax, then the sum; three concurrent reads
   * took 1.10 ms, two 0.45). Null when the head would not fit a float32 min_p (a very high temperature).
   */
  private async head(batchLogitIndex: number, T: number): Promise<CompactLogits | null> {
    const depth = SAMPLE_HEAD_NATS * T + HEAD_MARGIN_NATS;
    if (depth > 80) return null;
    const minP = Math.exp(-depth);
    const [pairs, z1, zT] = await Promise.all([
      this.withSampler(
        async (s) => {
          const [, , , listed] = await this.addon.sampleToken(batchLogitIndex, s, false, false, true, false);
          return listed as number[] | undefined;
        },
        { temperature: 1, minP, seed: 0 },
      ),
      this.normaliser(batchLogitIndex, GREEDY),
      T > 1 ? this.normaliser(batchLogitIndex, { temperature: T, seed: 0 }) : undefined,
    ]);
    if (!pairs || pairs.length < 2 || z1 === undefined || (T > 1 && zT === undefined)) return null;
    const m = pairs.length / 2;
    // Every token not listed is below llama.cpp's cut, max + ln(min_p) in float32; the smallest listed logit and
    // that cut with room for its rounding are both above it, and so is the smaller of the two.
    const floor = Math.min(pairs[2 * m - 1], pairs[1] - depth + 1e-4 * (1 + Math.abs(pairs[1])));
    const { ids, logits } = unpairs(pairs);
    return {
      kind: 'compact',
      ids,
      logits,
      floor,
      z1,
      zT: T === 1 ? z1 : T > 1 ? (zT as number) : null,
      vocab: this.config.vocab,
    };
  }

  async release(): Promise<void> {
    for (const s of this.samplers.splice(0)) s.dispose();
    await this.context.dispose();
    await this.model.dispose();
  }
}
