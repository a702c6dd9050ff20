import 'server-only';
import { and, count, desc, eq, lt, max, min, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { preparedQuery } from '../prepared';
import { trajectoryGroups } from '../schema';
import { isStorableStep } from './models';

/*
 * Both queries are range scans of trajectory_groups_model_step_idx (model_id, step, split, seq) and never
 * read the groups' data.
 */

export interface StepFilters {
  modelId: string;
  split?: string;
  source?: 'log' | 'train';
}

/** The filters as placeholders (modelId, split, source), for statements built once per shape (lib/db/prepared.ts). */
function conditions(f: StepFilters): SQL[] {
  const out: SQL[] = [eq(trajectoryGroups.modelId, sql.placeholder('modelId'))];
  if (f.split !== undefined) out.push(eq(trajectoryGroups.split, sql.placeholder('split')));
  if (f.source !== undefined) out.push(eq(trajectoryGroups.source, sql.placeholder('source')));
  return out;
}

const filterShape = (f: StepFilters) => `${f.split !== undefined}|${f.source !== undefined}`;
const filterValues = (f: StepFilters) => ({ modelId: f.modelId, split: f.split, source: f.source });

/** Up to `limit` distinct steps holding groups, newest first, below `before` when given. */
export async function stepsWithGroups(
  db: DbOrTx,
  f: StepFilters,
  before: number | undefined,
  limit: number,
): Promise<number[]> {
  // The cursor comes from the query string and may lie past the int4 range of steps, which Postgres refuses (a
  // 500): every step is below a larger cursor, and none below a smaller one.
  if (before !== undefined && !isStorableStep(before)) {
    if (before < 0) return [];
    before = undefined;
  }
  const query = preparedQuery(db, `trajectorySteps.page|${filterShape(f)}|${before !== undefined}`, () =>
    db
      .selectDistinct({ step: trajectoryGroups.step })
      .from(trajectoryGroups)
      .where(
        and(...conditions(f), ...(before === undefined ? [] : [lt(trajectoryGroups.step, sql.placeholder('before'))])),
      )
      .orderBy(desc(trajectoryGroups.step))
      .limit(sql.placeholder('limit'))
      .prepare(''),
  );
  const rows = await query.execute({ ...filterValues(f), before, limit });
  return rows.map((r) => r.step);
}

/**
 * Per step, split and source: groups, trajectories, the reward sum over scored trajectories (a group's mean
 * counts as many times as it has trajectories), how many were scored, and the extreme rewards.
 */
export async function stepAggregates(db: DbOrTx, f: StepFilters, steps: number[]) {
  const query = preparedQuery(db, `trajectorySteps.aggregates|${filterShape(f)}`, () => {
    const scored = sql`case when ${trajectoryGroups.rewardMean} is not null then ${trajectoryGroups.numTrajectories} else 0 end`;
    return (
      db
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
        // One text for any number of steps: an index condition either way.
        .where(and(...conditions(f), sql`${trajectoryGroups.step} = any(${sql.placeholder('steps')}::int[])`))
        .groupBy(trajectoryGroups.step, trajectoryGroups.split, trajectoryGroups.source)
        .prepare('')
    );
  });
  return query.execute({ ...filterValues(f), steps });
}

/** p10 and p90 of the rewards of one split over a bucket of steps (`step`: the bucket's last step). */
export interface RewardBandPoint {
  split: string;
  step: number;
  p10: number;
  p90: number;
}

/**
 * The reward band of the model page's reward chart: per split and per bucket of `width` steps, the 10th and 90th
 * percentiles of every stored trajectory's reward. Reads the groups' `rewards` arrays, never their data; groups
 * stored before that column existed have none and leave no band.
 */
export async function rewardBands(
  db: DbOrTx,
  modelId: string,
  opts: { splits: string[]; width: number; fromStep?: number; toStep?: number },
): Promise<RewardBandPoint[]> {
  if (opts.splits.length === 0) return [];
  const width = Math.max(1, Math.floor(opts.width));
  const range: SQL[] = [];
  if (opts.fromStep !== undefined) range.push(sql`and g.step >= ${opts.fromStep}`);
  if (opts.toStep !== undefined) range.push(sql`and g.step <= ${opts.toStep}`);
  const result = (await db.execute(sql`
    select g.split, max(g.step) as step,
           percentile_cont(0.1) within group (order by r) as p10,
           percentile_cont(0.9) within group (order by r) as p90
      from ${trajectoryGroups} g, unnest(g.rewards) as r
     where g.model_id = ${modelId} and g.split = any(${sql.param(opts.splits)}::text[]) and g.rewards is not null
           ${sql.join(range, sql` `)}
     group by g.split, g.step / ${width}
     order by g.split, 2`)) as unknown as { rows: { split: string; step: number; p10: number; p90: number }[] };
  return result.rows.map((r) => ({ split: r.split, step: Number(r.step), p10: Number(r.p10), p90: Number(r.p90) }));
}
