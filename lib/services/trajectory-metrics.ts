import 'server-only';
import { ApiError } from '@/lib/errors';
import { MAX_METRIC_NAMES, type TrajectoryGroup } from '@/lib/schemas/trajectory-input';
import { emptyCompletionCounts, type CompletionCounts } from '@/lib/body/prepared';

type Sum = [sum: number, n: number];

/**
 * Running sums behind the /log metrics (docs/contract.md §2.5), kept per model, step and split so that several logs to
 * one step pool their trajectories: each log adds its sums, and the metrics are recomputed from the total.
 * Every trajectory has a reward (the schemas require one, as ART's Trajectory does); groups stored before that rule
 * may lack one, and such a trajectory still counts as unscored, never as a reward of 0.
 */
export interface MetricSums {
  trajectories: number;
  exceptions: number;
  reward: Sum;
  /** Population std of each group with ≥ 2 rewarded trajectories. */
  groupStd: Sum;
  custom: Record<string, Sum>;
  groupCustom: Record<string, Sum>;
  /** The completions of every log to this step and split (absent from sums stored before it was kept). */
  completions?: CompletionCounts;
}

export function emptySums(): MetricSums {
  return { trajectories: 0, exceptions: 0, reward: [0, 0], groupStd: [0, 0], custom: {}, groupCustom: {} };
}

/** Sums read back from the database; anything malformed starts afresh rather than poisoning the metrics. */
export function sumsFromJson(value: unknown): MetricSums {
  const v = value as Partial<MetricSums> | null | undefined;
  if (!v || typeof v !== 'object' || !Array.isArray(v.reward) || !Array.isArray(v.groupStd)) return emptySums();
  return { ...emptySums(), ...v } as MetricSums;
}

const rewardOf = (t: { reward?: number }) =>
  typeof t.reward === 'number' && Number.isFinite(t.reward) ? t.reward : undefined;

export function addToSums(into: MetricSums, groups: TrajectoryGroup[]): MetricSums {
  const add = (map: Record<string, Sum>, key: string, raw: unknown) => {
    const value = typeof raw === 'boolean' ? (raw ? 1 : 0) : raw;
    if (typeof value !== 'number' || !Number.isFinite(value)) return;
    const acc = Object.hasOwn(map, key) ? map[key] : (map[key] = [0, 0]);
    acc[0] += value;
    acc[1] += 1;
  };
  for (const group of groups) {
    into.exceptions += group.exceptions?.length ?? 0;
    into.trajectories += group.trajectories.length;
    const groupRewards: number[] = [];
    for (const t of group.trajectories) {
      const r = rewardOf(t);
      if (r !== undefined) groupRewards.push(r);
      for (const [key, value] of Object.entries(t.metrics ?? {})) add(into.custom, key, value);
    }
    for (const r of groupRewards) {
      into.reward[0] += r;
      into.reward[1] += 1;
    }
    if (groupRewards.length >= 2) {
      into.groupStd[0] += populationStd(groupRewards);
      into.groupStd[1] += 1;
    }
    if (group.trajectories.length > 0) {
      for (const [key, value] of Object.entries(group.metrics ?? {})) add(into.groupCustom, `group_${key}`, value);
    }
  }
  return into;
}

/**
 * Refuses a batch whose pooled sums cannot be represented (docs/contract.md §2.5): two rewards of 1.7e308 made the
 * running sum Infinity, which was stored as null, and the step's mean then read 0.17. It also bounds the names one
 * step and split pool may hold, which several logs could otherwise grow past MAX_METRIC_NAMES one by one.
 */
export function checkPooledSums(sums: MetricSums, split: string): void {
  const loc = ['body', 'trajectory_groups'];
  const names = Object.keys(sums.custom).length + Object.keys(sums.groupCustom).length + 3;
  if (names > MAX_METRIC_NAMES)
    throw ApiError.valueError(
      loc,
      `this step's ${split} metrics would number ${names} distinct names (built-ins included); at most ${MAX_METRIC_NAMES} per split and step`,
    );
  const overflowing = [
    ['reward', sums.reward[0]],
    ['reward_std_dev', sums.groupStd[0]],
    ...Object.entries(sums.custom).map(([key, [sum]]) => [key, sum] as const),
    ...Object.entries(sums.groupCustom).map(([key, [sum]]) => [key, sum] as const),
  ].find(([, sum]) => !Number.isFinite(sum));
  if (overflowing)
    throw ApiError.valueError(
      loc,
      `the ${split} values of '${overflowing[0]}' at this step sum beyond what a 64-bit float holds (±1.8e308), so no mean can be stored; scale them down`,
    );
}

/** Adds batches' completion counts to the pool: the length-pinning check reads them (lib/services/length-pinning.ts). */
export function addCompletions(into: MetricSums, batches: readonly CompletionCounts[]): MetricSums {
  const c = { ...emptyCompletionCounts(), ...into.completions };
  for (const b of batches) {
    c.n += b.n;
    c.length += b.length;
    c.tokenN += b.tokenN;
    c.tokenSum += b.tokenSum;
    c.tokenMax = Math.max(c.tokenMax, b.tokenMax);
  }
  into.completions = c;
  return into;
}

export function metricsFromSums(sums: MetricSums): Record<string, number> {
  const out: Record<string, number> = {};
  // Custom names first so that built-in names win on collision (docs/contract.md §2.5 [DEC]).
  for (const [key, [sum, n]] of Object.entries(sums.custom)) if (n > 0) out[key] = sum / n;
  for (const [key, [sum, n]] of Object.entries(sums.groupCustom)) if (n > 0) out[key] = sum / n;
  if (sums.reward[1] > 0) {
    out.reward = sums.reward[0] / sums.reward[1];
    out.reward_std_dev = sums.groupStd[1] > 0 ? sums.groupStd[0] / sums.groupStd[1] : 0;
  } else {
    delete out.reward;
    delete out.reward_std_dev;
  }
  // The exceptions-inclusive definition; ART's Dec-2025 local code always produced 0 here.
  if (sums.trajectories + sums.exceptions > 0)
    out.exception_rate = sums.exceptions / (sums.trajectories + sums.exceptions);
  else delete out.exception_rate;
  // num_groups_submitted / num_groups_trainable are not rollout metrics: they belong to the job summary on
  // the *new* checkpoint (docs/contract.md §2.6), never to /log or to the checkpoint the rollouts came from.
  for (const key of Object.keys(out)) if (!Number.isFinite(out[key])) delete out[key];
  return out;
}

/** Metrics of one batch of trajectory groups, as ART computes them for the same operation (docs/contract.md §2.5). */
export function computeTrajectoryMetrics(groups: TrajectoryGroup[]): Record<string, number> {
  return metricsFromSums(addToSums(emptySums(), groups));
}

/** A group teaches something only when it has ≥ 2 trajectories with > 1 distinct reward (docs/contract.md §5.1). */
export function isTrainableGroup(group: TrajectoryGroup): boolean {
  if (group.trajectories.length < 2) return false;
  const first = group.trajectories[0].reward ?? 0;
  return group.trajectories.some((t) => (t.reward ?? 0) !== first);
}

export function mean(values: number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export function populationStd(values: number[]): number {
  const m = mean(values);
  let sq = 0;
  for (const v of values) sq += (v - m) ** 2;
  return Math.sqrt(sq / values.length);
}

export function prefixKeys(metrics: Record<string, number>, split: string): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${split}/${k}`, v]));
}
