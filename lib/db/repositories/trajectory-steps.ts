import 'server-only';
import { and, count, desc, eq, inArray, lt, max, min, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { trajectoryGroups } from '../schema';

/*
 * Both queries are range scans of trajectory_groups_model_step_idx (model_id, step, split, seq) and never
 * read the groups' data.
 */

export interface StepFilters {
  modelId: string;
  split?: string;
  source?: 'log' | 'train';
}

function conditions(f: StepFilters): SQL[] {
  const out: SQL[] = [eq(trajectoryGroups.modelId, f.modelId)];
  if (f.split !== undefined) out.push(eq(trajectoryGroups.split, f.split));
  if (f.source !== undefined) out.push(eq(trajectoryGroups.source, f.source));
  return out;
}

/** Up to `limit` distinct steps holding groups, newest first, below `before` when given. */
export async function stepsWithGroups(
  db: DbOrTx,
  f: StepFilters,
  before: number | undefined,
  limit: number,
): Promise<number[]> {
  const rows = await db
    .selectDistinct({ step: trajectoryGroups.step })
    .from(trajectoryGroups)
    .where(and(...conditions(f), ...(before === undefined ? [] : [lt(trajectoryGroups.step, before)])))
    .orderBy(desc(trajectoryGroups.step))
    .limit(limit);
  return rows.map((r) => r.step);
}

/**
 * Per step, split and source: groups, trajectories, the reward sum over scored trajectories (a group's mean
 * counts as many times as it has trajectories), how many were scored, and the extreme rewards.
 */
export async function stepAggregates(db: DbOrTx, f: StepFilters, steps: number[]) {
  const scored = sql`case when ${trajectoryGroups.rewardMean} is not null then ${trajectoryGroups.numTrajectories} else 0 end`;
  return db
    .select({
      step: trajectoryGroups.step,
      split: trajectoryGroups.split,
      source: trajectoryGroups.source,
      groups: count(),
      trajectories: sql<number>`sum(${trajectoryGroups.numTrajectories})`.mapWith(Number),
      rewardSum:
        sql<number>`coalesce(sum(${trajectoryGroups.rewardMean} * ${trajectoryGroups.numTrajectories}), 0)`.mapWith(
          Number,
        ),
      scored: sql<number>`sum(${scored})`.mapWith(Number),
      rewardMin: min(trajectoryGroups.rewardMin),
      rewardMax: max(trajectoryGroups.rewardMax),
    })
    .from(trajectoryGroups)
    .where(and(...conditions(f), inArray(trajectoryGroups.step, steps)))
    .groupBy(trajectoryGroups.step, trajectoryGroups.split, trajectoryGroups.source);
}
