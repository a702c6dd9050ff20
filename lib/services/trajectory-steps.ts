import 'server-only';
import { getDb } from '@/lib/db/client';
import { stepAggregates, stepsWithGroups } from '@/lib/db/repositories/trajectory-steps';
import type { TrajectoryStepDto, TrajectoryStepListDto } from '@/lib/schemas/trajectories';
import type { Principal } from './accounts';
import { requireModel } from './models';

/**
 * The steps that hold trajectory groups, newest first, `limit` steps a page (`before` is the cursor), each
 * with its groups, trajectories and rewards in total and per split. Rewards are per trajectory: a group's
 * mean counts as many times as it has trajectories.
 */
export async function listTrajectorySteps(
  principal: Principal,
  modelId: string,
  q: { split?: string; source?: 'log' | 'train'; before?: number; limit: number },
): Promise<TrajectoryStepListDto> {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  const filters = { modelId: model.id, split: q.split, source: q.source };
  const page = await stepsWithGroups(db, filters, q.before, q.limit + 1);
  const steps = page.slice(0, q.limit);
  if (steps.length === 0) return { object: 'list', data: [], has_more: false };
  const rows = await stepAggregates(db, filters, steps);

  const data = steps.map((step): TrajectoryStepDto => {
    const mine = rows.filter((r) => r.step === step);
    const splits = [...new Set(mine.map((r) => r.split))].sort().map((split) => {
      const of = mine.filter((r) => r.split === split);
      return {
        split,
        groups: sum(of.map((r) => Number(r.groups))),
        trajectories: sum(of.map((r) => r.trajectories)),
        reward_mean: meanOf(of),
      };
    });
    const mins = mine.map((r) => r.rewardMin).filter((v): v is number => v !== null);
    const maxes = mine.map((r) => r.rewardMax).filter((v): v is number => v !== null);
    return {
      step,
      groups: sum(splits.map((s) => s.groups)),
      trajectories: sum(splits.map((s) => s.trajectories)),
      reward_mean: meanOf(mine),
      reward_min: mins.length ? Math.min(...mins) : null,
      reward_max: maxes.length ? Math.max(...maxes) : null,
      sources: (['log', 'train'] as const).filter((s) => mine.some((r) => r.source === s)),
      splits,
    };
  });
  return { object: 'list', data, has_more: page.length > q.limit };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function meanOf(rows: { rewardSum: number; scored: number }[]): number | null {
  const n = sum(rows.map((r) => r.scored));
  return n > 0 ? sum(rows.map((r) => r.rewardSum)) / n : null;
}
