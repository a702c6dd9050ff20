/** Whether a metric improves upward or downward. Shared by the server (a model's best metric) and the dashboard. */
export type MetricDirection = 'max' | 'min';

// Names where a smaller value is better; anything else (reward, accuracy, score…) is "higher is better".
const LOWER_IS_BETTER = /(loss|error|perplexity|exception_rate|grad_norm|latency|regret|kl)(\b|_|$)/i;

/** Guessed from the metric's name; callers let people override it. */
export function metricDirection(metric: string): MetricDirection {
  return LOWER_IS_BETTER.test(metric) ? 'min' : 'max';
}

/**
 * The metrics a model is ranked by when nobody chose one, in order of preference: reward for RL runs, loss for
 * SFT runs. Held-out metrics only: a train metric rewards memorising (or hacking) the training data, and
 * crowned a destroyed model once; without a val metric a model has no best checkpoint until one is asked for.
 */
export const DEFAULT_BEST_METRICS = ['val/reward', 'val/loss'] as const;
