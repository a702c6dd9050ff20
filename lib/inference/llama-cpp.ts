import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';

/**
 * llama.cpp (node-llama-cpp's prebuilt CPU binding) as the forward pass of a Hugging Face model, with OUR sampler,
 * stop rules, grammars and logprobs on its logits (lib/engine/generate.ts's SequenceDecoder, through the scheduler).
 *
 * Why not node-llama-cpp's own sampling: its chain (top-k → top-p → min-p → temperature, llama.cpp's RNG) is not
 * vLLM's pipeline, so seeded answers, logprobs and the differential tests would change. Why not always the full
 * logits: the binding hands them to JavaScript as an array of 2·|V| numbers built element by element on the
 * main thread — measured (docs/engine/llama-cpp.md) at 17 ms a step for SmolLM2's 49,152 tokens, more than the
 * forward pass. So each step asks for what decides it exactly (SequenceDecoder.topLogitsSuffice):
 *
 * - `need = k` (greedy, no processor that reorders the vocabulary): the argmax (k = 0: the greedy sampler's selected token, no sort; the binding's `includeMax` comes back empty) or
 *   the top k + 1 logits (`includeTop`), plus `totalLogitWeight` = Σ exp(logit − max). The row handed to the
 *   sampler holds those logits exactly and every other token at c = max + log(R / (|V| − m)), R the normaliser's
 *   remainder, so the row's log-softmax normaliser is llama.cpp's (up to float rounding), the argmax, the top-k
 *   list, their ranks and logprobs are those of the full row. c is the mean of the rest, so it is ≤ the smallest
 *   returned logit; where it is not strictly below (all the rest tied with it) or the last two returned tie (a rank
 *   could depend on tokens not returned), the same step falls back to the full logits before the next batch.
 * - `need = null` (sampling, penalties, biases, grammars, min_tokens): the full logits.
 *
 * Sequences are llama.cpp context sequences (a fixed number of slots); a cache is one slot. A clone (n > 1
 * choices sharing a prompt) takes a slot and replays the source's tokens on its first forward.
 *
 * Pinned to node-llama-cpp 3.22.x: it uses the sequence's `_decodeTokens` and the addon's `sampleToken` (the
 * public `controlledEvaluate` builds a sorted Map of every logit: 3–4× slower still). tests/inference/llama-cpp.test.ts
 * fails if either changes.
 */

/** What one step needs of a sequence's next-token logits: the top `k` entries decide it, or null for all. */
export type LogitNeed = number | null;

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
    mapper: (batchLogitIndex: number, tokenIndex: number) => Promise<Float32Array>,
  ): Promise<Float32Array[]>;
}

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
  /** Steps that fell back from top-k to the full logits (a tie at the cut), for the tests. */
  fallbacks = 0;

  private constructor(
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly slots: number,
    ctx: number,
    vocab: number,
  ) {
    this.config = { ctx, vocab };
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
      // Greedy and nothing else: the candidates keep every token's raw logit, in id order, and the selected one
      // is the first largest (the lowest id on a tie, as our argmax).
      sampler.applyConfig({ temperature: 0 });
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
      return new LlamaCppModel(model, context, options.slots, options.ctx, options.vocab);
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
   * sequences' tokens in one llama_decode), and the next-token logits come back as full-vocabulary rows (see
   * the file comment for what a row holds when `needs[i]` is a number). `allLogits`: one row per new token
   * of the single input (prompt logprobs), always full.
   */
  async forwardAsync(
    inputs: { tokens: ArrayLike<number>; cache: LlamaCppCache }[],
    needs: LogitNeed[],
    options: { allLogits?: boolean } = {},
  ): Promise<Float32Array[]> {
    if (options.allLogits && inputs.length !== 1) throw new Error('allLogits takes one input');
    const results = await Promise.all(
      inputs.map(async ({ tokens, cache }, i) => {
        if (cache.released) throw new Error('the sequence was released');
        const own = Array.from(tokens);
        const all = [...cache.replay, ...own];
        if (cache.history.length + all.length > this.config.ctx)
          throw new RangeError(
            `${cache.history.length + all.length} tokens do not fit the context of ${this.config.ctx}`,
          );
        const flags = all.map((_, j) =>
          j === all.length - 1 || (options.allLogits && j >= cache.replay.length) ? true : undefined,
        );
        const need = options.allLogits ? null : needs[i];
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
        if (!options.allLogits) return [rows[all.length - 1]];
        // Rows for the own tokens (a replay's positions belong to the clone's source, already scored).
        const out: Float32Array[] = [];
        for (let j = all.length - own.length; j < all.length; j++) out.push(rows[j]);
        return out;
      }),
    );
    if (options.allLogits) {
      const rows = results[0];
      const V = this.config.vocab;
      const joined = new Float32Array(rows.length * V);
      rows.forEach((r, j) => joined.set(r, j * V));
      return [joined];
    }
    return results.map((r) => r[0]);
  }

  /** The next-token row at a batch position; runs before the next llama_decode overwrites it. */
  private async row(batchLogitIndex: number, need: LogitNeed): Promise<Float32Array> {
    const sampler = this.samplers.pop() ?? this.newSampler();
    try {
      return await this.rowWith(sampler, batchLogitIndex, need);
    } finally {
      this.samplers.push(sampler);
    }
  }

  private async rowWith(sampler: AddonSampler, batchLogitIndex: number, need: LogitNeed): Promise<Float32Array> {
    const V = this.config.vocab;
    if (need !== null) {
      const top = need + 1;
      const filter: [Token[], boolean, boolean, boolean, number] =
        need === 0 ? [[], false, false, true, 0] : [[], false, false, false, top];
      const [, , , pairs, total] = await this.addon.sampleToken(batchLogitIndex, sampler, false, false, filter, true);
      const row = pairs && total !== undefined ? compactRow(pairs as number[], total, V) : null;
      if (row) return row;
      this.fallbacks++;
    }
    const [, , , pairs] = await this.addon.sampleToken(batchLogitIndex, sampler, false, false, true, false);
    if (!pairs || pairs.length !== 2 * V) throw new Error(`llama.cpp returned ${pairs?.length ?? 0} logits for ${V}`);
    const row = new Float32Array(V);
    for (let i = 0; i < pairs.length; i += 2) row[pairs[i] as number] = pairs[i + 1] as number;
    return row;
  }

  async release(): Promise<void> {
    for (const s of this.samplers.splice(0)) s.dispose();
    await this.context.dispose();
    await this.model.dispose();
  }
}

/**
 * A full-vocabulary row from the top entries (token, logit pairs, best first) and Σ exp(logit − max), or null
 * when those do not decide the argmax, the ranks and the top list exactly (see the file comment).
 */
export function compactRow(pairs: readonly number[], totalLogitWeight: number, vocab: number): Float32Array | null {
  const m = pairs.length / 2;
  if (m < 1 || m >= vocab) return null;
  const max = pairs[1];
  let kept = 0;
  let lowest = Infinity;
  for (let i = 0; i < m; i++) {
    const l = pairs[2 * i + 1];
    kept += Math.exp(l - max);
    lowest = Math.min(lowest, l);
  }
  // The last two returned tie: a token not returned may tie too, and ranks would be off.
  if (m >= 2 && pairs[2 * m - 1] === pairs[2 * m - 3]) return null;
  const rest = totalLogitWeight - kept;
  const fill = rest > 0 ? max + Math.log(rest / (vocab - m)) : -Infinity;
  if (!(fill < lowest)) return null;
  const row = new Float32Array(vocab).fill(fill);
  for (let i = 0; i < m; i++) row[pairs[2 * i]] = pairs[2 * i + 1];
  // Float32 rounding could lift the fill to the lowest logit: keep it strictly below.
  if (!(Math.fround(fill) < Math.fround(lowest))) return null;
  return row;
}
