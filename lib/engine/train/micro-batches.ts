import type { SequenceScores, Trainer } from './trainer';

/**
 * Tokens per forward/backward chunk. A logical batch (an SFT batch, an RL row) may hold more tokens than
 * fit comfortably in activation memory (≈ 12 KB per token per layer at d=128), so it runs as chunks whose
 * gradients accumulate; the loss normalisation is known up front, so the sum equals one big pass.
 */
export const MICRO_BATCH_TOKENS = 4096;

/** Splits sequences into consecutive chunks of at most `budget` tokens (a longer sequence goes alone). */
export function chunkByTokens<T extends { ids: ArrayLike<number> }>(
  items: readonly T[],
  budget = MICRO_BATCH_TOKENS,
): T[][] {
  const chunks: T[][] = [];
  let cur: T[] = [];
  let n = 0;
  for (const item of items) {
    if (cur.length > 0 && n + item.ids.length > budget) {
      chunks.push(cur);
      cur = [];
      n = 0;
    }
    cur.push(item);
    n += item.ids.length;
  }
  if (cur.length > 0) chunks.push(cur);
  return chunks;
}

/**
 * Runs forward + backward over `items` in chunks, accumulating gradients. `grad` maps one item's scores to
 * dL/dlogprob (length n − 1) and may record whatever loss terms it needs.
 */
export function accumulateGradients<T extends { ids: ArrayLike<number> }>(
  trainer: Trainer,
  items: readonly T[],
  grad: (item: T, scores: SequenceScores) => Float32Array,
): void {
  for (const chunk of chunkByTokens(items)) {
    const scores = trainer.forward(
      chunk.map((c) => c.ids),
      { keepActivations: true },
    );
    trainer.backward(chunk.map((c, i) => grad(c, scores[i])));
  }
}

/** Scores without gradients, chunked the same way. */
export function scoreSequences(
  trainer: Trainer,
  sequences: ReadonlyArray<ArrayLike<number>>,
  options: { argmax?: boolean } = {},
): SequenceScores[] {
  const out: SequenceScores[] = [];
  for (const chunk of chunkByTokens(sequences.map((ids) => ({ ids })))) {
    out.push(
      ...trainer.forward(
        chunk.map((c) => c.ids),
        options,
      ),
    );
  }
  return out;
}

/** Resolves after yielding to the event loop, so an abort or a heartbeat can run between steps. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
