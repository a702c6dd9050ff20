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
 *
 * Each candidate metric is its own `order by … limit 1` subquery, written so that the default metrics match the
 * partial expression indexes `checkpoints_best_val_*` (schema.ts): the metric name is a literal, and the sort
 * direction and null ordering are those of the index. A sort over every checkpoint's jsonb cost 15 to 25 ms per
 * model with 1000 checkpoints in PGlite; an index probe costs well under one.
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
  const candidates = names.map((name, i) => {
    const value = sql`(c.metrics ->> ${sql.raw(quoteLiteral(name))})::float8`;
    const order = directions[i] === 'max' ? sql`${value} desc, c.step desc` : sql`${value} asc, c.step desc nulls last`;
    return sql`(select json_build_array(${sql.raw(quoteLiteral(name))}::text, ${value}, c.step, ${i + 1}::int)
                  from ${checkpoints} c
                 where c.model_id = m.id and jsonb_typeof(c.metrics -> ${sql.raw(quoteLiteral(name))}) = 'number'
                 order by ${order} limit 1)`;
  });
  const result = (await db.execute(sql`
    select m.id as model_id,
           (select max(c.step) from ${checkpoints} c where c.model_id = m.id) as latest,
           (select count(*) from ${checkpoints} c where c.model_id = m.id) as n,
           coalesce(${sql.join(candidates, sql`, `)}) as best
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

/**
 * A metric name as an SQL string literal. Literal rather than a bound parameter so that the planner can match the
 * expression indexes; names are user-chosen, so quotes are doubled (standard_conforming_strings is on in both
 * databases, so backslashes are ordinary characters).
 */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
