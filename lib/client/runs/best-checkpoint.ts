import { metricDirection, type MetricDirection } from '@/lib/schemas/metric-direction';

export { metricDirection, type MetricDirection };

export interface CheckpointLike {
  id: string;
  step: number;
  metrics: Record<string, number>;
}

/**
 * The checkpoint with the best value of `metric`; checkpoints without the metric (or with a non-finite
 * value) do not compete. On a tie the later step wins: it is the one a training client keeps by default
 * (ART's `delete_checkpoints` keeps the latest as well as the best). Null when none has the metric.
 */
export function selectBestCheckpoint<T extends CheckpointLike>(
  checkpoints: readonly T[],
  metric: string,
  direction: MetricDirection = metricDirection(metric),
): T | null {
  let best: T | null = null;
  for (const c of checkpoints) {
    const v = c.metrics[metric];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    if (best === null) {
      best = c;
      continue;
    }
    const b = best.metrics[metric];
    const better = direction === 'max' ? v > b : v < b;
    if (better || (v === b && c.step > best.step)) best = c;
  }
  return best;
}

/**
 * How many checkpoints share the best value of `metric`, out of how many have it. When every one of two or more
 * scored the same (an RL run whose every step scored 1 without changing the weights), no checkpoint is better than
 * another and the page says "tied" instead of crowning the latest.
 */
export function bestTie<T extends CheckpointLike>(
  checkpoints: readonly T[],
  metric: string,
  best: T | null,
): { tied: number; total: number; allTied: boolean } {
  const values = checkpoints.flatMap((c) => {
    const v = c.metrics[metric];
    return typeof v === 'number' && Number.isFinite(v) ? [v] : [];
  });
  const top = best?.metrics[metric];
  const tied = top === undefined ? 0 : values.filter((v) => v === top).length;
  return { tied, total: values.length, allTied: values.length >= 2 && tied === values.length };
}

/**
 * Metric keys across checkpoints, for column pickers: `val/*` first (what people choose checkpoints by),
 * then `train/*`, then the rest, each alphabetically.
 */
export function checkpointMetricKeys(checkpoints: readonly CheckpointLike[]): string[] {
  const keys = new Set<string>();
  for (const c of checkpoints) for (const k of Object.keys(c.metrics)) keys.add(k);
  const rank = (k: string) => (k.startsWith('val/') ? 0 : k.startsWith('train/') ? 1 : 2);
  return [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// Held-out metrics only: a train metric rewards memorising (or hacking) the training data, and once crowned a
// destroyed model with the lowest train loss. Reward before loss: an RL run is judged by its reward.
const DEFAULT_VAL_METRICS = ['val/reward', 'val/loss'] as const;

/**
 * The metric to rank by when the user has not picked one: val/reward, else val/loss, else the first other val/*
 * key. Never a train metric: without a validation metric there is no default and the page shows a hint instead.
 */
export function defaultBestMetric(keys: readonly string[]): string | null {
  for (const k of DEFAULT_VAL_METRICS) if (keys.includes(k)) return k;
  return keys.find((k) => k.startsWith('val/')) ?? null;
}
