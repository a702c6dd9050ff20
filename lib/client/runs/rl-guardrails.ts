import type { HistorySeries } from '../charts/chart-series';
import { parseSeriesName } from '../charts/chart-series';
import { metricDirection } from '@/lib/schemas/metric-direction';

interface JobLike {
  type: 'rl' | 'sft';
  status: string;
  step: number | null;
  num_sequences: number | null;
  completed_steps: number;
}

/** What a finished job did to the weights, beyond its status. */
export type JobOutcome =
  | { kind: 'no-update'; trainable: number; submitted: number | null; label: string; detail: string }
  | { kind: 'normal' };

/**
 * A completed RL job that took no gradient step left the weights as they were (docs/contract.md §2.7): the usual
 * cause is that no group had a reward spread, so every advantage was 0. It must not read as a green success.
 * `metrics` are the job's new checkpoint's (the worker records train/num_groups_* there even without a step).
 */
export function jobOutcome(job: JobLike, metrics?: Record<string, number> | null): JobOutcome {
  if (job.type !== 'rl' || job.status !== 'COMPLETED') return { kind: 'normal' };
  const stepsTaken = job.num_sequences ?? job.completed_steps;
  if (stepsTaken > 0) return { kind: 'normal' };
  const trainable = metrics?.['train/num_groups_trainable'];
  const submitted = metrics?.['train/num_groups_submitted'];
  if (typeof trainable === 'number' && trainable > 0) {
    // Groups had a spread but no token carried a logprob (or every history was empty): still no update.
    return {
      kind: 'no-update',
      trainable,
      submitted: typeof submitted === 'number' ? submitted : null,
      label: 'No update: no trainable tokens',
      detail: `${trainable} group${trainable === 1 ? '' : 's'} had a reward spread, but no history had a trainable token with a logprob; the weights did not change.`,
    };
  }
  const n = typeof submitted === 'number' ? submitted : null;
  if (n === 0)
    return {
      kind: 'no-update',
      trainable: 0,
      submitted: 0,
      label: 'No update: the job had no trajectory groups',
      detail: 'The job was sent without trajectory groups, so there was nothing to train on.',
    };
  return {
    kind: 'no-update',
    trainable: 0,
    submitted: n,
    label:
      n === null
        ? 'No update: no group had a reward spread'
        : n === 1
          ? 'No update: the one group had no reward spread'
          : `No update: 0 of ${n} groups had a reward spread`,
    detail:
      'Every trajectory of a group got the same reward, so every advantage was 0 and the weights did not change. Vary the rollouts (temperature, more per group) or the reward.',
  };
}

/**
 * The group count a job was sent with (its config's num_groups), as the checkpoint metric jobOutcome reads: enough
 * to tell "no groups at all" from "no group had a spread" where the checkpoint's own counts are not at hand.
 */
export function groupCountsFromConfig(jobConfig: unknown): Record<string, number> | null {
  const groups = (jobConfig as { num_groups?: unknown } | null)?.num_groups;
  return typeof groups === 'number' ? { 'train/num_groups_submitted': groups } : null;
}

/** True when there are at least two rewards and all are equal: no "best" or "worst" exists to show. */
export function rewardsTie(items: readonly { reward: number }[]): boolean {
  if (items.length < 2) return false;
  return items.every((t) => t.reward === items[0].reward);
}

/**
 * Keys the trainer writes about itself: not signals of what the policy does, so never "the metric that fell". The
 * speed fields of gradient_step (step_seconds, tokens_per_second) and training_started (load_seconds, …) are the
 * machine's: a step that got faster while the reward rose is no sign of reward hacking.
 */
const TRAINER_KEYS =
  /^(reward|reward_std_dev|exception_rate|loss|policy_loss|entropy|grad_norm|learning_rate|num_.*|zero_advantage_share|ignored\/.*|group_.*|step_seconds|tokens_per_second|load_seconds|base_model_load_seconds|base_model_cached)$/;
/** A completion length series, checked for pinning at its limit. */
const LENGTH_KEYS = /(completion_(tokens|length|len)|response_(tokens|length)|num_completion_tokens|output_tokens)$/;

export type HackingSignal =
  | {
      kind: 'metric-falls';
      reward: string;
      metric: string;
      rewardFrom: number;
      rewardTo: number;
      from: number;
      to: number;
      steps: [number, number];
    }
  | { kind: 'length-pinned'; metric: string; limit: number; share: number; steps: [number, number] }
  | {
      /** From the server's own count of the stored completions (history's length_pinning), whatever the metrics. */
      kind: 'length-capped';
      split: string;
      shareFrom: number;
      shareTo: number;
      tokensFrom: number | null;
      tokensTo: number | null;
      tokenMax: number | null;
      steps: [number, number];
    };

/** The history's length_pinning entries as signals: the server counted finish_reason "length" and tokens itself. */
export function lengthCappedSignals(
  pinned: readonly {
    split: string;
    steps: [number, number];
    length_share_from: number;
    length_share_to: number;
    tokens_from: number | null;
    tokens_to: number | null;
    token_max: number | null;
  }[],
): HackingSignal[] {
  return pinned.map((p) => ({
    kind: 'length-capped',
    split: p.split,
    shareFrom: p.length_share_from,
    shareTo: p.length_share_to,
    tokensFrom: p.tokens_from,
    tokensTo: p.tokens_to,
    tokenMax: p.token_max,
    steps: p.steps,
  }));
}

/** The split a signal's trajectories are in. */
export function signalSplit(s: HackingSignal): string {
  return s.kind === 'length-capped' ? s.split : parseSeriesName(s.kind === 'metric-falls' ? s.reward : s.metric).split;
}

function finitePoints(s: HistorySeries): [number, number][] {
  return s.points.filter(([, v]) => Number.isFinite(v));
}

/** Mean of the first and of the last third of the points: robust to one noisy step at either end. */
function ends(points: readonly [number, number][]): { from: number; to: number } {
  const k = Math.max(1, Math.floor(points.length / 3));
  const mean = (xs: readonly [number, number][]) => xs.reduce((a, [, v]) => a + v, 0) / xs.length;
  return { from: mean(points.slice(0, k)), to: mean(points.slice(-k)) };
}

function span(points: readonly [number, number][]): number {
  let lo = Infinity;
  let hi = -Infinity;
  for (const [, v] of points) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return hi - lo;
}

/** A change counts when it is at least 10 % of the series' own range and of its starting magnitude. */
function moved(from: number, to: number, range: number): boolean {
  const d = Math.abs(to - from);
  return d > 0 && d >= 0.1 * range && d >= 0.05 * Math.max(Math.abs(from), 1e-9);
}

/**
 * Signs of reward hacking in a run's history: the reward rises while another metric the
 * user logged on the same split falls (one that is better when higher), or a completion-length metric sits at
 * its maximum for most of the recent steps (the policy learned to fill the budget). Needs ≥ 3 points per series.
 */
export function detectRewardHacking(series: readonly HistorySeries[]): HackingSignal[] {
  const out: HackingSignal[] = [];
  const bySplit = new Map<string, Map<string, HistorySeries>>();
  for (const s of series) {
    const { split, metric } = parseSeriesName(s.name);
    if (!bySplit.has(split)) bySplit.set(split, new Map());
    bySplit.get(split)!.set(metric, s);
  }
  for (const metrics of bySplit.values()) {
    const reward = metrics.get('reward');
    const rp = reward ? finitePoints(reward) : [];
    if (reward && rp.length >= 3) {
      const r = ends(rp);
      if (r.to > r.from && moved(r.from, r.to, span(rp))) {
        for (const [metric, s] of metrics) {
          if (TRAINER_KEYS.test(metric) || LENGTH_KEYS.test(metric) || metricDirection(metric) !== 'max') continue;
          const p = finitePoints(s);
          if (p.length < 3) continue;
          const m = ends(p);
          if (m.to < m.from && moved(m.from, m.to, span(p))) {
            out.push({
              kind: 'metric-falls',
              reward: reward.name,
              metric: s.name,
              rewardFrom: r.from,
              rewardTo: r.to,
              from: m.from,
              to: m.to,
              steps: [p[0][0], p[p.length - 1][0]],
            });
          }
        }
      }
    }
    for (const [metric, s] of metrics) {
      if (!LENGTH_KEYS.test(metric)) continue;
      const p = finitePoints(s);
      if (p.length < 3) continue;
      const limit = Math.max(...p.map(([, v]) => v));
      const recent = p.slice(-Math.max(3, Math.ceil(p.length / 3)));
      const atLimit = recent.filter(([, v]) => v >= limit * 0.98).length / recent.length;
      // Pinned: most recent steps at the maximum, which the start of the run did not reach.
      if (limit > 0 && atLimit >= 0.75 && p[0][1] < limit * 0.9) {
        out.push({
          kind: 'length-pinned',
          metric: s.name,
          limit,
          share: atLimit,
          steps: [recent[0][0], p[p.length - 1][0]],
        });
      }
    }
  }
  return out;
}

export type RunVerdict =
  | { kind: 'stalled'; text: string }
  | { kind: 'hacked'; text: string }
  | {
      kind: 'improving' | 'declining' | 'flat';
      text: string;
      series: string;
      from: number;
      to: number;
      /** What `from → to` compares, e.g. "first vs last third of steps". */
      basis: string;
    }
  | { kind: 'unknown'; text: string };

/** The model's training curve (history with axis=gradient_step): every job's gradient steps, and which job is where. */
export interface TrainingCurve {
  series: readonly HistorySeries[];
  segments: readonly { job_id: string; first_x: number; last_x: number }[];
}

/**
 * The stretch of a curve series the verdict judges: the newest job's own gradient steps when it has at least two
 * (jobs on different data start from different losses, so a curve across jobs would compare unlike things), else the
 * whole curve. Null when that has fewer than two points.
 */
function newestStretch(
  s: HistorySeries | undefined,
  segments: TrainingCurve['segments'],
): { points: [number, number][]; job: string | null } | null {
  if (!s) return null;
  const all = finitePoints(s);
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i];
    const inJob = all.filter(([x]) => x >= seg.first_x && x <= seg.last_x);
    if (inJob.length >= 2) return { points: inJob, job: seg.job_id };
    // The newest job has not taken two steps yet: fall through to the one before only if this one has none.
    if (inJob.length > 0) break;
  }
  return all.length >= 2 ? { points: all, job: null } : null;
}

function trend(name: string, label: string, points: [number, number][], basis: string): RunVerdict {
  const { from, to } = points.length >= 3 ? ends(points) : { from: points[0][1], to: points[points.length - 1][1] };
  const better = metricDirection(name) === 'max' ? to > from : to < from;
  const kind = !moved(from, to, span(points)) ? 'flat' : better ? 'improving' : 'declining';
  const word = kind === 'flat' ? 'Flat' : kind === 'improving' ? 'Improving' : 'Declining';
  return { kind, text: `${word}: ${label}`, series: name, from, to, basis };
}

/**
 * The one-line answer to "is my run working?": possibly reward-hacked when detectRewardHacking (or the server's
 * length check) found a signal, which outranks everything (a hacked reward can sit at a tie that reads as "no
 * update"); stalled when the newest finished RL job made no update; else a trend:
 * - val/reward, train/reward (an RL run: one point per RL step, so the checkpoint history is already per step);
 * - val/loss on the training curve (an SFT job's held-out loss after each epoch), then the training loss there,
 *   each over the newest job's gradient steps. Never the checkpoint history's train/loss, which is one mean per
 *   SFT job: two jobs on different data would read as "Declining" from two unlike means.
 * Without jobs on the curve (a run logged only through /log), the checkpoint history's val/loss and train/loss are
 * used. `'loading'`: the curve is on its way, and nothing per job stands in for it meanwhile.
 */
export function runVerdict(
  series: readonly HistorySeries[],
  newestFinishedRlJob: JobOutcome | null,
  signals: readonly HackingSignal[],
  curveOrLoading: TrainingCurve | 'loading' | null = null,
): RunVerdict {
  if (signals.length > 0) {
    const s = signals[0];
    return {
      kind: 'hacked',
      text:
        s.kind === 'metric-falls'
          ? `Possible reward hacking: ${s.reward} rises while ${s.metric} falls`
          : s.kind === 'length-capped'
            ? `Possible reward hacking: ${Math.round(s.shareTo * 100)} % of ${s.split} completions stop at the token limit`
            : `Possible reward hacking: ${s.metric} pinned at ${s.limit}`,
    };
  }
  if (newestFinishedRlJob?.kind === 'no-update') return { kind: 'stalled', text: newestFinishedRlJob.label };
  const history = (name: string) => series.find((s) => s.name === name && finitePoints(s).length >= 2);
  for (const name of ['val/reward', 'train/reward']) {
    const s = history(name);
    if (s) return trend(name, name, finitePoints(s), 'first vs last third of steps');
  }
  // Until the curve has loaded, the checkpoint history's per-job loss means must not stand in for it.
  if (curveOrLoading === 'loading') return { kind: 'unknown', text: 'Reading the training curve…' };
  const curve = curveOrLoading;
  const onCurve = (name: string) => curve?.series.find((s) => s.name === name);
  const curveLoss = newestStretch(onCurve('loss'), curve?.segments ?? []);
  const curveVal = newestStretch(onCurve('val/loss'), curve?.segments ?? []);
  const basis = (stretch: { points: [number, number][]; job: string | null }, unit: string) =>
    `${stretch.points.length >= 3 ? 'first vs last third' : 'first vs last'} of ${stretch.points.length} ${unit}${
      stretch.job ? ` of job ${stretch.job.slice(0, 8)}` : ''
    }`;
  if (curveVal) return trend('val/loss', 'val/loss', curveVal.points, basis(curveVal, 'evaluations'));
  if (curveLoss) return trend('loss', 'training loss', curveLoss.points, basis(curveLoss, 'gradient steps'));
  // Jobs on the curve but fewer than two gradient steps: a job is starting or took one step. Its checkpoints'
  // per-job means are no trend either.
  if (curve && curve.segments.length > 0) {
    return { kind: 'unknown', text: 'Not enough gradient steps yet to call a trend' };
  }
  for (const name of ['val/loss', 'train/loss']) {
    const s = history(name);
    if (s) return trend(name, name, finitePoints(s), 'first vs last third of steps');
  }
  return { kind: 'unknown', text: 'Not enough points yet to call a trend' };
}
