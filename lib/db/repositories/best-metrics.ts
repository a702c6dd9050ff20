import 'server-only';
import { and, asc, desc, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { checkpoints } from '../schema';
import type { BestMetricDto } from '@/lib/schemas/models';
import { DEFAULT_BEST_METRICS, metricDirection, type MetricDirection } from '@/lib/schemas/metric-direction';

/* Read-only aggregates over existing tables for the dashboard's lists. */

/** Per model, the checkpoint with the best value of `metric` (later step on a tie, like the checkpoint table). */
async function bestOf(db: DbOrTx, modelIds: string[], metric: string, direction: MetricDirection) {
  if (modelIds.length === 0) return [];
  // jsonb holds no NaN or Infinity, so every number found is finite.
  const value = sql<number>`(${checkpoints.metrics} ->> ${metric})::float8`.mapWith(Number);
  return db
    .selectDistinctOn([checkpoints.modelId], { modelId: checkpoints.modelId, step: checkpoints.step, value })
    .from(checkpoints)
    .where(
      and(inArray(checkpoints.modelId, modelIds), sql`jsonb_typeof(${checkpoints.metrics} -> ${metric}) = 'number'`),
    )
    .orderBy(checkpoints.modelId, direction === 'max' ? desc(value) : asc(value), desc(checkpoints.step));
}

/**
 * The best metric of each model: by `metric` when one is asked for, else the first of DEFAULT_BEST_METRICS a
 * checkpoint has (val/reward, train/reward, val/loss, train/loss). Models without any are absent from the map.
 */
export async function bestMetrics(
  db: DbOrTx,
  modelIds: string[],
  choice: { metric?: string; direction?: MetricDirection } = {},
): Promise<Map<string, BestMetricDto>> {
  const out = new Map<string, BestMetricDto>();
  const candidates = choice.metric ? [choice.metric] : DEFAULT_BEST_METRICS;
  let remaining = modelIds;
  for (const name of candidates) {
    const direction = choice.direction ?? metricDirection(name);
    for (const row of await bestOf(db, remaining, name, direction)) {
      out.set(row.modelId, { name, value: row.value, step: row.step, direction });
    }
    remaining = remaining.filter((id) => !out.has(id));
  }
  return out;
}
