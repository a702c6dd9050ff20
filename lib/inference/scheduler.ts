import { SequenceDecoder, type GenerationRequest, type LogitNeed, type LogitRow } from '@/lib/engine/generate';
import type { KvCache, LanguageModel } from '@/lib/engine/model';
import type { LlamaCppCache, LlamaCppModel } from './llama-cpp';
import { logSoftmax, tokenRank, topTokens } from '@/lib/engine/sampler';
import type { TokenPieces } from '@/lib/engine/tokenizer';
import type { EngineEvent } from './engine-events';
import { vllmDecodedTokens, type PromptPositionLogprobs, type TokenCandidate } from './logprobs';

/**
 * Continuous batching for one model (pure: no threads, no I/O). Requests join and leave between steps;
 * every step runs ONE forward pass over all live sequences of all requests (new prompts' prefill mixed with
 * one decode token per running sequence), so concurrent streams share each weight read instead of queueing.
 * Emits lib/inference's EngineEvents: raw token text, logprobs, finish reasons.
 */

export interface ScheduledRequest {
  id: string;
  /** One per choice. Choices with identical prompts share one prefill (n > 1). */
  sequences: GenerationRequest[];
  /** Ranked candidates per prompt position, or null for none (docs/contract.md §8.8). */
  promptLogprobs: number | null;
  onEvents(events: EngineEvent[]): void;
  onDone(result: { promptLogprobs: (PromptPositionLogprobs | null)[] | null }): void;
  onError(err: unknown): void;
}

/** A sequence's KV cache, on either engine. */
type Cache = KvCache | LlamaCppCache;

/**
 * The engine of one scheduler: our WebAssembly forward pass (synchronous), or llama.cpp's (asynchronous native
 * work, with a fixed number of sequence slots; see llama-cpp.ts).
 */
export type SchedulerModel = LanguageModel | LlamaCppModel;

interface LiveSequence {
  request: ScheduledRequest;
  choice: number;
  decoder: SequenceDecoder;
  cache: Cache;
  /** Logits for this sequence's next token, from the last forward pass (all, or the head its need asked for). */
  logits: LogitRow | null;
}

interface LiveRequest {
  request: ScheduledRequest;
  sequences: LiveSequence[];
  promptLogprobs: (PromptPositionLogprobs | null)[] | null;
  aborted: boolean;
}

// A synchronous loop would starve the thread's message port (aborts, new requests): yield every few ms.
const YIELD_EVERY_MS = 4;

export class BatchScheduler {
  private readonly waiting: ScheduledRequest[] = [];
  private readonly live = new Map<string, LiveRequest>();
  private running = false;

  constructor(
    private readonly model: SchedulerModel,
    private readonly tokenizer: TokenPieces,
  ) {}

  /** One forward pass on whichever engine; `needs` is what each input's next-token row must decide. */
  private async forward(
    inputs: { tokens: readonly number[]; cache: Cache }[],
    needs: LogitNeed[],
  ): Promise<LogitRow[]> {
    const m = this.model;
    if ('forwardAsync' in m) return m.forwardAsync(inputs as { tokens: number[]; cache: LlamaCppCache }[], needs);
    return m.forward(inputs as { tokens: readonly number[]; cache: KvCache }[]);
  }

  /** A prefill of one prompt with every position's full logits (prompt logprobs), positions × vocabulary. */
  private async forwardAll(input: { tokens: readonly number[]; cache: Cache }): Promise<Float32Array> {
    const m = this.model;
    if ('forwardAsync' in m) return await m.forwardAll(input as { tokens: number[]; cache: LlamaCppCache });
    return m.forward([input as { tokens: readonly number[]; cache: KvCache }], { allLogits: true })[0];
  }

  get activeSequences(): number {
    let n = this.waiting.reduce((a, r) => a + r.sequences.length, 0);
    for (const r of this.live.values()) n += r.sequences.filter((s) => !s.decoder.finished).length;
    return n;
  }

  submit(request: ScheduledRequest): void {
    const ctx = this.model.config.ctx;
    if ('slots' in this.model && request.sequences.length > this.model.slots) {
      request.onError(
        new RangeError(
          `${request.sequences.length} choices exceed the engine's ${this.model.slots} concurrent sequences`,
        ),
      );
      return;
    }
    for (const seq of request.sequences) {
      if (seq.promptTokenIds.length === 0 || seq.promptTokenIds.length >= ctx) {
        request.onError(
          new RangeError(`prompt of ${seq.promptTokenIds.length} tokens does not fit the context of ${ctx}`),
        );
        return;
      }
    }
    this.waiting.push(request);
    if (!this.running) void this.loop();
  }

  /** The client went away: its choices finish with `abort` at the next step. */
  abort(id: string): void {
    const waitingAt = this.waiting.findIndex((r) => r.id === id);
    if (waitingAt >= 0) {
      const [request] = this.waiting.splice(waitingAt, 1);
      request.onEvents(request.sequences.map((_, choice) => ({ type: 'finish', choice, finishReason: 'abort' })));
      request.onDone({ promptLogprobs: null });
      return;
    }
    const live = this.live.get(id);
    if (live) live.aborted = true;
  }

  private readonly decode = (ids: number[]) => this.tokenizer.decode(ids);

  /**
   * The sampled token and its top-k candidates with vLLM's `decoded_token` texts (pieces of a multi-byte
   * character: see vllmDecodedTokens). A sampled token also among the top-k takes the text of that entry.
   */
  private sampledCandidates(
    sampled: { tokenId: number; logprob: number },
    ranked: readonly { tokenId: number; logprob: number }[],
    previousSampledId: number | null,
  ): { tokenText: string; candidates: TokenCandidate[] } {
    const list = [sampled, ...ranked];
    const texts = vllmDecodedTokens(
      list.map((c) => c.tokenId),
      previousSampledId,
      this.decode,
    );
    const textById = new Map<number, string>();
    list.forEach((c, i) => textById.set(c.tokenId, texts[i]));
    return {
      tokenText: textById.get(sampled.tokenId) ?? '',
      candidates: ranked.map((c) => ({
        tokenId: c.tokenId,
        logprob: c.logprob,
        tokenText: textById.get(c.tokenId) ?? '',
      })),
    };
  }

  private async admit(): Promise<{
    inputs: { tokens: readonly number[]; cache: Cache }[];
    targets: LiveSequence[][];
  }> {
    const inputs: { tokens: readonly number[]; cache: Cache }[] = [];
    const targets: LiveSequence[][] = [];
    const ctx = this.model.config.ctx;
    while (this.waiting.length) {
      // llama.cpp has a fixed number of sequences: a request waits (in order) until its choices fit.
      if ('freeSlots' in this.model && this.model.freeSlots() < this.waiting[0].sequences.length) break;
      const request = this.waiting.shift()!;
      const live: LiveRequest = { request, sequences: [], promptLogprobs: null, aborted: false };
      const groups = new Map<string, number[]>();
      request.sequences.forEach((s, i) => {
        const key = s.promptTokenIds.join(',');
        groups.set(key, [...(groups.get(key) ?? []), i]);
      });
      for (const members of groups.values()) {
        const prompt = request.sequences[members[0]].promptTokenIds;
        const capacity = Math.max(...members.map((i) => Math.min(ctx, prompt.length + request.sequences[i].maxTokens)));
        const cache: Cache = this.model.newCache(capacity);
        const group = members.map((choice) => {
          const seq: LiveSequence = {
            request,
            choice,
            decoder: new SequenceDecoder(this.tokenizer, request.sequences[choice], ctx),
            cache,
            logits: null,
          };
          live.sequences[choice] = seq;
          return seq;
        });
        if (request.promptLogprobs != null && live.promptLogprobs === null) {
          // Prompt logprobs need every position's logits: prefill this prompt on its own.
          const all = await this.forwardAll({ tokens: prompt, cache });
          live.promptLogprobs = this.promptLogprobs(all, prompt, request.promptLogprobs);
          const V = this.model.config.vocab;
          const last = all.slice((prompt.length - 1) * V, prompt.length * V);
          for (const [j, seq] of group.entries()) {
            if (j > 0) seq.cache = cache.clone();
            seq.logits = last;
          }
        } else {
          inputs.push({ tokens: prompt, cache });
          targets.push(group);
        }
      }
      this.live.set(request.id, live);
    }
    return { inputs, targets };
  }

  private promptLogprobs(all: Float32Array, prompt: readonly number[], n: number): (PromptPositionLogprobs | null)[] {
    const V = this.model.config.vocab;
    const out: (PromptPositionLogprobs | null)[] = [null];
    for (let t = 1; t < prompt.length; t++) {
      const lp = logSoftmax(all.subarray((t - 1) * V, t * V));
      const id = prompt[t];
      const top = topTokens(lp, n);
      // vLLM's list for a prompt position: the actual token, then the top-n; texts as for sampled tokens.
      const texts = vllmDecodedTokens([id, ...top.map((c) => c.tokenId)], null, this.decode);
      out.push({
        token: { tokenId: id, logprob: lp[id], tokenText: texts[0], rank: tokenRank(lp, id) },
        ranked: top.map((c, i) => ({ ...c, tokenText: texts[i + 1], rank: i + 1 })),
      });
    }
    return out;
  }

  private async loop(): Promise<void> {
    this.running = true;
    // Start on the next turn of the event loop: requests submitted together share the first forward pass,
    // and an abort right after a submit is seen before any work is done.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let lastYield = performance.now();
    try {
      while (this.waiting.length || this.live.size) {
        let step: Awaited<ReturnType<BatchScheduler['admit']>>;
        try {
          step = await this.admit();
        } catch (err) {
          this.failAll(err);
          return;
        }
        const inputs = [...step.inputs];
        const targets: LiveSequence[][] = [...step.targets];
        // A prefill's row serves every choice of its prompt: the first's need decides (they share the params), but a
        // sampled head decides one draw only, and each choice draws its own: those read the whole row.
        const needs: LogitNeed[] = step.targets.map((group) => {
          const need = group[0].decoder.logitNeed();
          return need !== null && typeof need === 'object' && group.length > 1 ? null : need;
        });

        // Sample from pending logits; every sequence still running contributes one decode token.
        for (const live of [...this.live.values()]) {
          const events: EngineEvent[] = [];
          for (const seq of live.sequences) {
            if (seq.decoder.finished || seq.logits === null) continue;
            if (live.aborted) {
              seq.decoder.abort();
              events.push({ type: 'finish', choice: seq.choice, finishReason: 'abort' });
              continue;
            }
            const e = seq.decoder.step(seq.logits, seq.choice);
            seq.logits = null;
            const generated = seq.decoder.tokens;
            const { tokenText, candidates } = this.sampledCandidates(
              e.token,
              e.token.ranked,
              generated.length > 1 ? generated[generated.length - 2].tokenId : null,
            );
            events.push({
              type: 'token',
              choice: seq.choice,
              tokenId: e.token.tokenId,
              text: e.rawText,
              tokenText,
              logprob: e.token.logprob,
              topLogprobs: candidates,
              ...(e.finishReason ? { finishReason: e.finishReason, stopReason: e.stopReason } : {}),
            });
            if (!seq.decoder.finished) {
              inputs.push({ tokens: [e.token.tokenId], cache: seq.cache });
              targets.push([seq]);
              needs.push(seq.decoder.logitNeed());
            }
          }
          if (events.length) live.request.onEvents(events);
          if (live.sequences.every((s) => s.decoder.finished)) this.finish(live);
        }

        if (inputs.length) {
          let logits: LogitRow[];
          try {
            logits = await this.forward(inputs, needs);
          } catch (err) {
            this.failAll(err);
            return;
          }
          targets.forEach((group, i) => {
            group.forEach((seq, j) => {
              // Choices sharing a prompt: the first keeps the prefilled cache, the others get copies.
              if (j > 0) seq.cache = group[0].cache.clone() as Cache;
              seq.logits = logits[i];
            });
          });
        }
        if (performance.now() - lastYield > YIELD_EVERY_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      }
    } finally {
      this.running = false;
    }
  }

  private finish(live: LiveRequest): void {
    this.live.delete(live.request.id);
    for (const cache of new Set(live.sequences.map((s) => s.cache))) cache.release();
    live.request.onDone({ promptLogprobs: live.promptLogprobs });
  }

  private failAll(err: unknown): void {
    for (const live of this.live.values()) {
      for (const cache of new Set(live.sequences.map((s) => s.cache))) cache.release();
      live.request.onError(err);
    }
    this.live.clear();
  }
}
