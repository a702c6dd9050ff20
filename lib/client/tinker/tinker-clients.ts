import type { TinkerTrainingClientDto } from '@/lib/schemas/tinker-clients';
import type { HistorySeries } from '../charts/chart-series';
import { runVerdict, type HackingSignal, type RunVerdict } from '../runs/rl-guardrails';

/*
 * How the dashboard reads a Tinker training client (docs/tinker.md): whether it is live, its status in words, and the
 * model page's verdict for a run trained through the SDK. What every model page loads; the card's and the lists'
 * formatters are in tinker-format.ts. Pure, unit-tested beside it.
 */

type ClientLike = Pick<TinkerTrainingClientDto, 'status' | 'worker_id' | 'waiting_reason' | 'error'>;

/** Waiting for a worker or held by one: its state lives in a worker's memory and can still change. */
export function isLiveClient(c: Pick<TinkerTrainingClientDto, 'status'>): boolean {
  return c.status === 'waiting' || c.status === 'ready';
}

export type ClientTone = 'neutral' | 'info' | 'danger';

export interface ClientStatusView {
  /** The badge's word. */
  label: string;
  tone: ClientTone;
  /** The worker that holds it or loads it, shown beside the badge. */
  worker: string | null;
  /** A line under the badge: why it waits, or why it closed. A failure's error is shown on its own (ClientError). */
  note: string | null;
}

/**
 * waiting with no worker: "Waiting for a worker" and why; waiting with a worker: that worker took its create_model and
 * is loading the base model; ready: held by that worker; closed: the reason it closed (unloaded, session ended), which
 * is no error; failed: its error, shown by the caller with its category.
 */
export function clientStatusView(c: ClientLike): ClientStatusView {
  switch (c.status) {
    case 'waiting':
      return c.worker_id
        ? { label: 'Loading', tone: 'info', worker: c.worker_id, note: null }
        : { label: 'Waiting for a worker', tone: 'neutral', worker: null, note: c.waiting_reason };
    case 'ready':
      return { label: 'Ready', tone: 'info', worker: c.worker_id, note: null };
    case 'closed':
      return { label: 'Closed', tone: 'neutral', worker: null, note: c.error };
    case 'failed':
      return { label: 'Failed', tone: 'danger', worker: null, note: null };
  }
}

/**
 * The training-curve stats only RL losses produce (docs/tinker.md §3.2: ratio_mean, clip_fraction, kl_sample_train,
 * advantage_mean): their presence says the run's loss is a policy-gradient surrogate, not a quality measure.
 */
const RL_ONLY_STATS = ['ratio_mean', 'clip_fraction', 'kl_sample_train', 'advantage_mean'];

/** Series a person logs to judge a run by, in the order runVerdict prefers them. */
const JUDGED = ['val/reward', 'train/reward', 'val/loss'];

/**
 * The summary strip's verdict for a Tinker run. Its checkpoints' train/* metrics are copies of the last optim step
 * before each sampler save, so the trend is read from the training curve itself (one point per optim step), and only
 * for a cross-entropy loss: an RL loss (importance sampling, PPO…) is near zero whatever the policy is worth, so a
 * "falling loss" there would claim nonsense. A val/train reward or val loss the client logged still comes first.
 */
export function tinkerRunVerdict(
  checkpointSeries: readonly HistorySeries[],
  curve: readonly HistorySeries[],
  signals: readonly HackingSignal[],
): RunVerdict {
  const logged = checkpointSeries.filter(
    (s) => JUDGED.includes(s.name) && s.points.filter(([, v]) => Number.isFinite(v)).length >= 2,
  );
  if (signals.length > 0 || logged.length > 0) return runVerdict(logged, null, signals);
  const hasPoints = (name: string) => curve.some((s) => s.name === name && s.points.length > 0);
  if (RL_ONLY_STATS.some(hasPoints)) {
    return { kind: 'unknown', text: 'No reward logged: an RL loss does not say whether the policy improves' };
  }
  const loss = curve.find((s) => s.name === 'loss');
  const verdict = runVerdict(loss ? [{ ...loss, name: 'train/loss' }] : [], null, []);
  if (verdict.kind === 'unknown') return { kind: 'unknown', text: 'Not enough optim steps yet to call a trend' };
  if (verdict.kind === 'improving' || verdict.kind === 'declining' || verdict.kind === 'flat') {
    return { ...verdict, series: 'loss', text: verdict.text.replace('train/loss', 'mean train loss') };
  }
  return verdict;
}
