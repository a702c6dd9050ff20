import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { checkpoints, models } from '../schema';
import type { BestMetricDto } from '@/lib/schemas/models';
import { DEFAULT_BEST_METRICS, metricDirection, type MetricDirection } from '@/lib/schemas/metric-direction';

/* Read-only aggregates over existing tables for the dashboard's lists. */

export interface ModelListStats {
  latest: number | null;
  count: number;
  best: BestMetricDto | null;
}

export interface BestMetricChoice {
  metric?: string;
  direction?: MetricDirection;
}

/**
 * Select-list fields giving a model's latest checkpoint step, checkpoint count (a column of the model's row, so the
 * query must select from `models`) and best metric: by `metric` when
 * one is asked for, else the first of DEFAULT_BEST_METRICS any of its checkpoints has; the best value, the later
 * step on a tie (as the checkpoint table ranks). They are correlated subqueries on `modelId`, so a list query
 * carries them in its own select list: one round trip per page. PostgreSQL evaluates such costly select-list
 * expressions after the LIMIT, for the rows of the page only.
 *
 * Each candidate metric is its own `order by … limit 1` subquery, written so that the default metrics match the
 * partial expression indexes `checkpoints_best_val_*` (schema.ts): the metric name is a literal, and the sort
 * direction and null ordering are those of the index. A sort over every checkpoint's jsonb cost 15 to 25 ms per
 * model with 1000 checkpoints in PGlite; an index probe costs well under one.
 */
export function modelStatsFields(modelId: AnyPgColumn | SQL, choice: BestMetricChoice = {}) {
  const names = choice.metric ? [choice.metric] : [...DEFAULT_BEST_METRICS];
  const directions = names.map((n) => choice.direction ?? metricDirection(n));
  const candidates = names.map((name, i) => {
    const literal = sql.raw(quoteLiteral(name));
    const value = sql`(c.metrics ->> ${literal})::float8`;
    const order = directions[i] === 'max' ? sql`${value} desc, c.step desc` : sql`${value} asc, c.step desc nulls last`;
    return sql`(select json_build_array(${literal}::text, ${value}, c.step, ${sql.raw(String(i + 1))}::int)
                  from ${checkpoints} c
                 where c.model_id = ${modelId} and jsonb_typeof(c.metrics -> ${literal}) = 'number'
                 order by ${order} limit 1)`;
  });
  return {
    fields: {
      latestStep: sql<number | null>`(select max(c.step) from ${checkpoints} c where c.model_id = ${modelId})`,
      // Kept on the model's row by the checkpoint writes: a count here was linear in the model's checkpoints, on
      // every row.
      checkpointCount: models.checkpointCount,
      bestMetric: sql<unknown>`coalesce(${sql.join(candidates, sql`, `)})`,
    },
    /** The best metric a row's `bestMetric` field names, as the API shows it. */
    parseBest(raw: unknown): BestMetricDto | null {
      if (raw == null) return null;
      const [name, value, step, ord] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [
        string,
        number,
        number,
        number,
      ];
      return { name, value, step, direction: directions[ord - 1] };
    },
  };
}

/**
 * A metric name as an SQL string literal. Literal rather than a bound parameter so that the planner can match the
 * expression indexes; names are user-chosen, so quotes are doubled (standard_conforming_strings is on in both
 * databases, so backslashes are ordinary characters).
 */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
