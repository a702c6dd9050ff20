import { BUILTIN_CHAT_TEMPLATE, ChatTemplate, tokenizeConversation, type ChatMessage } from '../chat-template';
import type { Model } from '../model';
import type { Tokenizer } from '../tokenizer';
import { AdamW } from './adamw';
import { addGradientsIn, copyGradientsOut, copyWeightsIn, copyWeightsOut } from './flat';
import { accumulateGradients, scoreSequences, yieldToEventLoop } from './micro-batches';
import { Trainer } from './trainer';

/**
 * Supervised fine-tuning with ART's local semantics (docs/contract.md §3.2): consecutive batches of `batchSize`
 * examples, cross-entropy on assistant tokens only, normalised by the batch's trainable-token count, AdamW
 * (weight decay 0.01), global grad-norm clip 1.0, one learning rate per batch (a list repeats its last entry),
 * one optimizer step and one reported step per batch.
 */

export interface SftExampleInput {
  /** 1-based line in the dataset file, for error messages. */
  line: number;
  messages: ChatMessage[];
  tools?: readonly unknown[];
}

export interface SftStepMetrics {
  loss: number;
  learning_rate: number;
  grad_norm: number;
  num_trajectories: number;
  num_trainable_tokens: number;
  /** On an epoch's last step when examples are held out: mean loss per trained token of the held-out examples. */
  'val/loss'?: number;
  /** Same step: the share of held-out trained tokens that are the model's most likely next token. */
  'val/token_accuracy'?: number;
}

export interface SftOptions {
  batchSize: number;
  /** Passes over the examples (default 1), in the same order each time; the learning-rate list runs across all of them. */
  epochs?: number;
  learningRate: number | readonly number[];
  assistantTurns: 'all' | 'last';
  /** Dataset file name for messages ("train.jsonl line 3: …"). */
  file?: string;
  template?: ChatTemplate;
  weightDecay?: number;
  maxGradNorm?: number;
  signal?: AbortSignal;
  /** Called after each optimizer step; awaited, so a slow reporter paces training. */
  onStep?: (metrics: SftStepMetrics, index: number) => Promise<void> | void;
  /** Held-out examples, scored after every epoch (never trained on). */
  validation?: readonly SftExampleInput[];
  /**
   * Another thread that computes part of each batch (data parallelism): half of the batch's tokens go there
   * while this thread computes the rest, and the gradients are summed before the optimizer step.
   */
  helper?: SftGradientHelper;
}

/** A shard of an SFT batch computed elsewhere (another worker thread): same loss, same normaliser. */
export interface SftShard {
  /** The current weights, flat in canonical tensor order (flat.ts). */
  weights: Float32Array;
  items: Array<{ ids: number[]; mask: number[] }>;
  /** The whole batch's trainable-token count: each shard divides by it, so the gradients just add. */
  tokens: number;
}

export interface SftGradientHelper {
  /** Must start computing before it returns (the caller computes its own shard meanwhile). */
  computeShard(shard: SftShard): Promise<{ lossSum: number; gradients: Float32Array }>;
}

/** The SFT loss gradient of one example: −1/tokens on every position whose target token is trained. */
export function sftGradient(
  ex: { ids: ArrayLike<number>; mask: ArrayLike<number> },
  logprobs: ArrayLike<number>,
  tokens: number,
) {
  const grad = new Float32Array(ex.ids.length - 1);
  let lossSum = 0;
  for (let t = 0; t < grad.length; t++) {
    if (ex.mask[t + 1] !== 1) continue;
    lossSum -= logprobs[t];
    grad[t] = -1 / tokens;
  }
  return { grad, lossSum };
}

/** Splits a batch in two with about equal token counts (consecutive, so each side keeps data order). */
export function splitByTokens<T extends { ids: ArrayLike<number> }>(items: readonly T[]): [T[], T[]] {
  const total = items.reduce((n, x) => n + x.ids.length, 0);
  let acc = 0;
  let cut = 0;
  while (cut < items.length - 1 && acc + items[cut].ids.length / 2 < total / 2) acc += items[cut++].ids.length;
  return [items.slice(0, cut), items.slice(cut)];
}

export interface TokenizedExample {
  line: number;
  ids: number[];
  mask: number[];
  /** Tokens dropped from the end to fit the context. */
  truncated: number;
}

export class SftDataError extends Error {}

/**
 * Tokenises examples with the chat template (tools included). Conversations longer than the context are
 * truncated from the end, keeping the first `ctx` tokens (TRL's max_length truncation): the prompt and the
 * start of the answer still train, and a dataset with one long line does not fail a whole job.
 */
export function tokenizeSftExamples(
  tokenizer: Tokenizer,
  examples: readonly SftExampleInput[],
  ctx: number,
  options: { assistantTurns: 'all' | 'last'; template?: ChatTemplate; file?: string },
): TokenizedExample[] {
  const template = options.template ?? new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
  return examples.map((ex) => {
    let conv;
    try {
      conv = tokenizeConversation(tokenizer, template, ex.messages, {
        tools: ex.tools ?? null,
        assistantTurns: options.assistantTurns,
      });
    } catch (err) {
      throw new SftDataError(`${options.file ?? 'dataset'} line ${ex.line}: ${(err as Error).message}`);
    }
    const truncated = Math.max(0, conv.ids.length - ctx);
    return { line: ex.line, ids: conv.ids.slice(0, ctx), mask: conv.mask.slice(0, ctx), truncated };
  });
}

export function learningRateFor(lr: number | readonly number[], batch: number): number {
  if (typeof lr === 'number') return lr;
  if (lr.length === 0) throw new Error('learning_rate list is empty');
  return lr[Math.min(batch, lr.length - 1)];
}

export function sftBatchCount(numExamples: number, batchSize: number, epochs = 1): number {
  return Math.ceil(numExamples / batchSize) * epochs;
}

export interface SftResult {
  steps: SftStepMetrics[];
}

/** Trains `model` in place. Examples shorter than two tokens or without a trainable token add no loss. */
export async function trainSft(
  model: Model,
  tokenizer: Tokenizer,
  examples: readonly SftExampleInput[],
  options: SftOptions,
): Promise<SftResult> {
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1)
    throw new Error('batch size must be a positive integer');
  const data = tokenizeSftExamples(tokenizer, examples, model.config.ctx, options);
  const heldOut = tokenizeSftExamples(tokenizer, options.validation ?? [], model.config.ctx, options).filter(
    (ex) => ex.ids.length >= 2 && ex.mask.slice(1).some((m) => m === 1),
  );
  const trainer = new Trainer(model);
  const optimizer = new AdamW(trainer, {
    weightDecay: options.weightDecay ?? 0.01,
    maxGradNorm: options.maxGradNorm ?? 1.0,
  });
  const steps: SftStepMetrics[] = [];
  try {
    const epochs = options.epochs ?? 1;
    if (!Number.isInteger(epochs) || epochs < 1) throw new Error('epochs must be a positive integer');
    const perEpoch = sftBatchCount(data.length, options.batchSize);
    const batches = perEpoch * epochs;
    for (let b = 0; b < batches; b++) {
      options.signal?.throwIfAborted();
      const first = (b % perEpoch) * options.batchSize;
      const batch = data.slice(first, first + options.batchSize);
      // Position t predicts token t+1, so token t+1's mask decides whether position t carries loss.
      const usable = batch.filter((ex) => ex.ids.length >= 2 && ex.mask.slice(1).some((m) => m === 1));
      let tokens = 0;
      for (const ex of usable) for (let t = 1; t < ex.ids.length; t++) tokens += ex.mask[t];
      const lr = learningRateFor(options.learningRate, b);
      let lossSum = 0;
      let gradNorm = 0;
      trainer.zeroGrad();
      if (tokens > 0) {
        const [local, remote] = options.helper && usable.length >= 2 ? splitByTokens(usable) : [usable, []];
        const pending =
          remote.length > 0 && options.helper
            ? options.helper.computeShard({ weights: copyWeightsOut(model), items: remote, tokens })
            : null;
        accumulateGradients(trainer, local, (ex, scores) => {
          const out = sftGradient(ex, scores.logprobs, tokens);
          lossSum += out.lossSum;
          return out.grad;
        });
        if (pending) {
          const other = await pending;
          lossSum += other.lossSum;
          addGradientsIn(trainer, other.gradients);
        }
        gradNorm = optimizer.step(lr);
      }
      const metrics: SftStepMetrics = {
        loss: tokens > 0 ? lossSum / tokens : 0,
        learning_rate: lr,
        grad_norm: gradNorm,
        num_trajectories: batch.length,
        num_trainable_tokens: tokens,
        ...(heldOut.length > 0 && b % perEpoch === perEpoch - 1 ? evaluateSft(trainer, heldOut) : {}),
      };
      steps.push(metrics);
      await options.onStep?.(metrics, b);
      await yieldToEventLoop();
    }
    return { steps };
  } finally {
    optimizer.release();
    trainer.release();
  }
}

/**
 * The held-out examples' loss (summed over their trained tokens, divided by the count, as a batch's training loss
 * is) and token accuracy (greedy next token = the example's token), on the current weights.
 */
export function evaluateSft(
  trainer: Trainer,
  examples: readonly TokenizedExample[],
): { 'val/loss': number; 'val/token_accuracy': number } {
  const scores = scoreSequences(
    trainer,
    examples.map((ex) => ex.ids),
    { argmax: true },
  );
  let lossSum = 0;
  let hits = 0;
  let tokens = 0;
  examples.forEach((ex, i) => {
    const { logprobs, argmax } = scores[i];
    for (let t = 0; t < logprobs.length; t++) {
      if (ex.mask[t + 1] !== 1) continue;
      tokens++;
      lossSum -= logprobs[t];
      hits += argmax![t];
    }
  });
  return { 'val/loss': tokens > 0 ? lossSum / tokens : 0, 'val/token_accuracy': tokens > 0 ? hits / tokens : 0 };
}

/**
 * The helper side of data-parallel SFT: computes one shard's gradients on this thread's own model copy.
 * Keep one per thread; it reuses the model, trainer and heap across steps.
 */
export class SftShardWorker {
  private trainer: Trainer | null = null;

  constructor(private readonly model: Model) {}

  compute(shard: SftShard): { lossSum: number; gradients: Float32Array } {
    copyWeightsIn(this.model, shard.weights);
    this.trainer ??= new Trainer(this.model);
    const trainer = this.trainer;
    trainer.zeroGrad();
    let lossSum = 0;
    accumulateGradients(trainer, shard.items, (ex, scores) => {
      const out = sftGradient(ex, scores.logprobs, shard.tokens);
      lossSum += out.lossSum;
      return out.grad;
    });
    return { lossSum, gradients: copyGradientsOut(trainer) };
  }

  release(): void {
    this.trainer?.release();
    this.trainer = null;
  }
}
