import 'server-only';
import type { TrajectoryGroup } from '@/lib/schemas/trajectories';

/**
 * Metrics of a batch of trajectory groups, as ART computes them for the same operation
 * (docs/contract.md §2.5). Keys are bare names; callers prefix them with `{split}/`.
 */
export function computeTrajectoryMetrics(groups: TrajectoryGroup[]): Record<string, number> {
  const rewards: number[] = [];
  let exceptions = 0;
  const groupStds: number[] = [];
  const custom = new Map<string, { sum: number; n: number }>();
  const groupCustom = new Map<string, { sum: number; n: number }>();

  const add = (into: Map<string, { sum: number; n: number }>, key: string, raw: unknown) => {
    const value = typeof raw === 'boolean' ? (raw ? 1 : 0) : raw;
    if (typeof value !== 'number' || !Number.isFinite(value)) return;
    const acc = into.get(key) ?? { sum: 0, n: 0 };
    acc.sum += value;
    acc.n += 1;
    into.set(key, acc);
  };

  for (const group of groups) {
    exceptions += group.exceptions?.length ?? 0;
    const groupRewards = group.trajectories.map((t) => t.reward ?? 0);
    rewards.push(...groupRewards);
    if (groupRewards.length >= 2) groupStds.push(populationStd(groupRewards));
    for (const t of group.trajectories) {
      for (const [key, value] of Object.entries(t.metrics ?? {})) add(custom, key, value);
    }
    if (group.trajectories.length > 0) {
      for (const [key, value] of Object.entries(group.metrics ?? {})) add(groupCustom, `group_${key}`, value);
    }
  }

  const out: Record<string, number> = {};
  // Custom names first so that built-in names win on collision (docs/contract.md §2.5 [DEC]).
  for (const [key, { sum, n }] of custom) out[key] = sum / n;
  for (const [key, { sum, n }] of groupCustom) out[key] = sum / n;
  if (rewards.length > 0) {
    out.reward = mean(rewards);
    out.reward_std_dev = groupStds.length > 0 ? mean(groupStds) : 0;
  }
  // The exceptions-inclusive definition; ART's Dec-2025 local code always produced 0 here.
  if (rewards.length + exceptions > 0) out.exception_rate = exceptions / (rewards.length + exceptions);
  // num_groups_submitted / num_groups_trainable are not rollout metrics: they belong to the job summary on
  // the *new* checkpoint (docs/contract.md §2.6), never to /log or to the checkpoint the rollouts came from.

  for (const key of Object.keys(out)) if (!Number.isFinite(out[key])) delete out[key];
  return out;
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
