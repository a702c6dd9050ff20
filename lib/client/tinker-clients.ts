import type {
  TinkerRequestSummaryDto,
  TinkerSavedWeightsDto,
  TinkerTrainingClientDto,
} from '@/lib/schemas/tinker-clients';
import type { HistorySeries } from './chart-series';
import { formatDuration } from './format-time';
import { runVerdict, type HackingSignal, type RunVerdict } from './rl-guardrails';

/*
 * How the dashboard reads a Tinker training client (docs/tinker.md): its status in words, its LoRA settings, its
 * requests in the order a person looks for them, and the model page's verdict for a run trained through the SDK.
 * Pure, unit-tested beside it; the components in components/tinker only lay these out.
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

/** The parts of the model LoRA trains, in the SDK's words (docs/tinker.md §2.7): attn, mlp, unembed. */
export function loraParts(lora: TinkerTrainingClientDto['lora']): string[] {
  const parts: string[] = [];
  if (lora.train_attn) parts.push('attn');
  if (lora.train_mlp) parts.push('mlp');
  if (lora.train_unembed) parts.push('unembed');
  return parts;
}

/** "queued" and "running" counts as one phrase; null when nothing is open. */
export function openRequestsText(c: Pick<TinkerTrainingClientDto, 'queued_requests' | 'running_requests'>) {
  const parts: string[] = [];
  if (c.running_requests > 0) parts.push(`${c.running_requests.toLocaleString('en')} running`);
  if (c.queued_requests > 0) parts.push(`${c.queued_requests.toLocaleString('en')} queued`);
  return parts.length === 0 ? null : parts.join(' · ');
}

/** Who an error's category blames (the SDK's RequestFailedError carries the same): the caller, the server, or neither. */
export function errorCategoryLabel(category: string | null): string {
  if (category === 'user') return 'user error';
  if (category === 'server') return 'server error';
  return 'error';
}

const isOpen = (r: Pick<TinkerRequestSummaryDto, 'status'>) => r.status === 'queued' || r.status === 'running';

/**
 * The requests table's order: what is open on top (running, then queued in the order they will run: seq_id, then
 * arrival), then the finished ones newest first. The API lists them by arrival, newest first.
 */
export function sortRequests<R extends TinkerRequestSummaryDto>(requests: readonly R[]): R[] {
  const seq = (r: R) => r.seq_id ?? Number.MAX_SAFE_INTEGER;
  const time = (iso: string) => Date.parse(iso);
  return [...requests].sort((a, b) => {
    if (isOpen(a) !== isOpen(b)) return isOpen(a) ? -1 : 1;
    if (isOpen(a)) {
      if (a.status !== b.status) return a.status === 'running' ? -1 : 1;
      return seq(a) - seq(b) || time(a.created_at) - time(b.created_at);
    }
    return time(b.created_at) - time(a.created_at) || seq(b) - seq(a);
  });
}

/**
 * How long a request has taken: from when a worker started it to when it finished, or to `now` while it runs; null
 * for one that never started (queued, or refused at submission) or when `now` is not known yet (server render).
 */
export function requestDurationMs(
  r: Pick<TinkerRequestSummaryDto, 'started_at' | 'finished_at'>,
  now: number | null,
): number | null {
  if (r.started_at === null) return null;
  const end = r.finished_at !== null ? Date.parse(r.finished_at) : now;
  return end === null ? null : Math.max(0, end - Date.parse(r.started_at));
}

/** A request's duration: "230 ms" and "2.3 s" for the quick ones most are, then as a job's ("3 min 5 s"). */
export function formatRequestDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  return formatDuration(ms);
}

/** "512 B", "3.4 kB", "12.1 MB": decimal units, as file managers and the checkpoint downloads show them. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1000) return `${Math.max(0, Math.round(bytes))} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} ${units[unit]}`;
}

/** Saved weights in the order the card lists them: sampler weights first (they are checkpoints), newest first. */
export function sortSavedWeights(saved: readonly TinkerSavedWeightsDto[]): TinkerSavedWeightsDto[] {
  return [...saved].sort(
    (a, b) =>
      Number(a.kind === 'training') - Number(b.kind === 'training') ||
      Date.parse(b.created_at) - Date.parse(a.created_at) ||
      a.name.localeCompare(b.name),
  );
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
    return { ...verdict, series: 'loss', text: verdict.text.replace('train/loss', 'train loss per token') };
  }
  return verdict;
}
