import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { checkpoints } from '../schema';
import type { BestMetricDto } from '@/lib/schemas/models';
import { DEFAULT_BEST_METRICS, metricDirection, type MetricDirection } from '@/lib/schemas/metric-direction';

/* Read-only aggregates over existing tables for the dashboard's lists. */

export interface ModelListStats {
  latest: number | null;
  count: number;
  best: BestMetricDto | null;
}

/**
 * For each model, in one query: its latest checkpoint step, checkpoint count and best metric: by `metric` when one
 * is asked for, else the first of DEFAULT_BEST_METRICS any of its checkpoints has; the best value, the later step
 * on a tie (as the checkpoint table ranks). One statement instead of one per candidate metric plus one for the
 * counts: a list page costs one round trip for its rows and one for these.
 */
export async function modelListStats(
  db: DbOrTx,
  modelIds: string[],
  choice: { metric?: string; direction?: MetricDirection } = {},
): Promise<Map<string, ModelListStats>> {
  const out = new Map<string, ModelListStats>();
  if (modelIds.length === 0) return out;
  const names = choice.metric ? [choice.metric] : [...DEFAULT_BEST_METRICS];
  const directions = names.map((n) => choice.direction ?? metricDirection(n));
  // Sort key: the value itself for 'min' metrics, its negation for 'max' ones, so one ORDER BY serves both.
  const signs = directions.map((d) => (d === 'max' ? -1 : 1));
  const result = (await db.execute(sql`
    select m.id as model_id,
           (select max(c.step) from ${checkpoints} c where c.model_id = m.id) as latest,
           (select count(*) from ${checkpoints} c where c.model_id = m.id) as n,
           (select json_build_array(k.name, (c.metrics ->> k.name)::float8, c.step, k.ord)
              from unnest(${sql.param(names)}::text[], ${sql.param(signs)}::float8[]) with ordinality as k(name, sign, ord)
              join ${checkpoints} c on c.model_id = m.id and jsonb_typeof(c.metrics -> k.name) = 'number'
             order by k.ord, (c.metrics ->> k.name)::float8 * k.sign, c.step desc
             limit 1) as best
      from unnest(${sql.param(modelIds)}::uuid[]) as m(id)
  `)) as unknown as { rows: { model_id: string; latest: number | null; n: string | number; best: unknown }[] };
  for (const row of result.rows) {
    const best = row.best as [string, number, number, number] | null;
    out.set(row.model_id, {
      latest: row.latest,
      count: Number(row.n),
      best: best ? { name: best[0], value: best[1], step: best[2], direction: directions[best[3] - 1] } : null,
    });
  }
  return out;
}
