import 'server-only';
import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { runMetricRollups, runMetrics } from '../schema';

/**
 * Bucket widths of run_metric_rollups, finest first, a factor 8 apart: for a chart of M points over a span of
 * S steps there is a width giving between M/2 and 4M rows, for any S up to 4096 × 4M (16M steps at M = 1000).
 */
export const ROLLUP_WIDTHS = [8, 64, 512, 4096] as const;
const COARSEST = ROLLUP_WIDTHS[ROLLUP_WIDTHS.length - 1];

export type RollupRow = typeof runMetricRollups.$inferSelect;
export interface MetricPoint {
  step: number;
  value: number;
}

/**
 * Writes the metrics of one step and keeps the rollups exact. A new point folds into each width's bucket with
 * least/greatest arithmetic (commutative, so concurrent writers to one bucket stay correct under the row lock
 * ON CONFLICT takes). A point that overwrites a different value may have been a bucket's min or max, which no
 * arithmetic can undo: those buckets are rebuilt from the points (at most 4096 per name).
 */
export async function upsertRunMetrics(db: DbOrTx, runId: string, step: number, metrics: Record<string, number>) {
  const names = Object.keys(metrics);
  if (names.length === 0) return;
  const existing = await db
    .select({ name: runMetrics.name, value: runMetrics.value })
    .from(runMetrics)
    .where(and(eq(runMetrics.runId, runId), eq(runMetrics.step, step), inArray(runMetrics.name, names)));
  const before = new Map(existing.map((r) => [r.name, r.value]));

  await insertPoints(
    db,
    names.map((name) => ({ runId, name, step, value: metrics[name] })),
  );

  const added = names.filter((name) => !before.has(name));
  const changed = names.filter((name) => before.has(name) && before.get(name) !== metrics[name]);
  if (added.length > 0)
    await foldIntoRollups(
      db,
      runId,
      step,
      added.map((name) => ({ name, value: metrics[name] })),
    );
  if (changed.length > 0) await rebuildRollups(db, runId, { names: changed, step });
}

async function insertPoints(db: DbOrTx, all: { runId: string; name: string; step: number; value: number }[]) {
  for (const rows of batches(all))
    await db
      .insert(runMetrics)
      .values(rows)
      .onConflictDoUpdate({
        target: [runMetrics.runId, runMetrics.name, runMetrics.step],
        set: { value: sql`excluded.value`, updatedAt: sql`now()` },
      });
}

/**
 * Appends points at new steps (the training curve: x only grows), many at once: the points in one insert, and their
 * rollups summarised here per bucket first, since one INSERT … ON CONFLICT may not touch a row twice, then merged
 * into the stored buckets with the same rules as foldIntoRollups.
 */
export async function appendRunPoints(
  db: DbOrTx,
  runId: string,
  points: readonly { step: number; metrics: Record<string, number> }[],
) {
  const rows = points.flatMap(({ step, metrics }) =>
    Object.entries(metrics).map(([name, value]) => ({ runId, name, step, value })),
  );
  if (rows.length === 0) return;
  await insertPoints(db, rows);
  const buckets = new Map<string, RollupRow>();
  for (const p of rows) {
    for (const width of ROLLUP_WIDTHS) {
      const bucket = Math.floor(p.step / width);
      const key = `${width}\u0000${p.name}\u0000${bucket}`;
      const b = buckets.get(key);
      if (!b) {
        buckets.set(key, pointRollup(runId, width, p.name, p.step, p.value));
        continue;
      }
      b.n++;
      if (p.step < b.firstStep) [b.firstStep, b.firstValue] = [p.step, p.value];
      if (p.value < b.minValue || (p.value === b.minValue && p.step < b.minStep))
        [b.minStep, b.minValue] = [p.step, p.value];
      if (p.value > b.maxValue || (p.value === b.maxValue && p.step < b.maxStep))
        [b.maxStep, b.maxValue] = [p.step, p.value];
      if (p.step > b.lastStep) [b.lastStep, b.lastValue] = [p.step, p.value];
    }
  }
  await mergeRollups(db, [...buckets.values()]);
}

async function foldIntoRollups(db: DbOrTx, runId: string, step: number, points: { name: string; value: number }[]) {
  await mergeRollups(
    db,
    points.flatMap(({ name, value }) => ROLLUP_WIDTHS.map((width) => pointRollup(runId, width, name, step, value))),
  );
}

/** The rollup row of one point alone in its bucket of `width`. */
function pointRollup(runId: string, width: number, name: string, step: number, value: number): RollupRow {
  return {
    runId,
    width,
    name,
    bucket: Math.floor(step / width),
    n: 1,
    firstStep: step,
    firstValue: value,
    minStep: step,
    minValue: value,
    maxStep: step,
    maxValue: value,
    lastStep: step,
    lastValue: value,
  };
}

/**
 * Rows per INSERT: a statement may bind at most 65,535 parameters (PostgreSQL's protocol limit), and a rollup row
 * binds 13, so one statement for every row failed past about 1,260 series at one step.
 */
const ROWS_PER_INSERT = 2000;

function* batches<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) yield rows.slice(i, i + ROWS_PER_INSERT);
}

/** Merges bucket summaries into the stored ones: earliest first, lowest min, highest max, latest last. */
async function mergeRollups(db: DbOrTx, all: RollupRow[]) {
  for (const rows of batches(all)) await mergeRollupBatch(db, rows);
}

async function mergeRollupBatch(db: DbOrTx, rows: RollupRow[]) {
  const r = runMetricRollups;
  // Ties keep the earlier step, as the rebuild query does, so both paths store the same row.
  const newMin = sql`(excluded.min_value < ${r.minValue} OR (excluded.min_value = ${r.minValue} AND excluded.min_step < ${r.minStep}))`;
  const newMax = sql`(excluded.max_value > ${r.maxValue} OR (excluded.max_value = ${r.maxValue} AND excluded.max_step < ${r.maxStep}))`;
  await db
    .insert(r)
    .values(rows)
    .onConflictDoUpdate({
      target: [r.runId, r.width, r.name, r.bucket],
      set: {
        n: sql`${r.n} + excluded.n`,
        firstStep: sql`CASE WHEN excluded.first_step < ${r.firstStep} THEN excluded.first_step ELSE ${r.firstStep} END`,
        firstValue: sql`CASE WHEN excluded.first_step < ${r.firstStep} THEN excluded.first_value ELSE ${r.firstValue} END`,
        minStep: sql`CASE WHEN ${newMin} THEN excluded.min_step ELSE ${r.minStep} END`,
        minValue: sql`CASE WHEN ${newMin} THEN excluded.min_value ELSE ${r.minValue} END`,
        maxStep: sql`CASE WHEN ${newMax} THEN excluded.max_step ELSE ${r.maxStep} END`,
        maxValue: sql`CASE WHEN ${newMax} THEN excluded.max_value ELSE ${r.maxValue} END`,
        lastStep: sql`CASE WHEN excluded.last_step > ${r.lastStep} THEN excluded.last_step ELSE ${r.lastStep} END`,
        lastValue: sql`CASE WHEN excluded.last_step > ${r.lastStep} THEN excluded.last_value ELSE ${r.lastValue} END`,
      },
    });
}

/**
 * Recomputes rollups from the points: every width's bucket holding `scope.step` for `scope.names`, or, without
 * a scope, the whole run (after a bulk load). The same aggregation as the backfill in migration 0004:
 * min()/max() over [value, step] arrays give the step of the extreme values in one pass.
 */
export async function rebuildRollups(db: DbOrTx, runId: string, scope?: { names: string[]; step: number }) {
  const widths = sql.join(
    ROLLUP_WIDTHS.map((w) => sql`(${w}::int)`),
    sql`, `,
  );
  let where = sql`m.run_id = ${runId}`;
  if (scope) {
    const lo = Math.floor(scope.step / COARSEST) * COARSEST;
    const names = sql.join(
      scope.names.map((n) => sql`${n}`),
      sql`, `,
    );
    // The coarsest bucket's range lets the index narrow the scan before the per-width bucket test.
    where = sql`${where} AND m.name IN (${names}) AND m.step >= ${lo} AND m.step < ${lo + COARSEST}
      AND m.step / w.width = ${scope.step}::int / w.width`;
  }
  await db.execute(sql`
    INSERT INTO run_metric_rollups (run_id, width, name, bucket, n, first_step, first_value, min_step, min_value, max_step, max_value, last_step, last_value)
    SELECT m.run_id, w.width, m.name, m.step / w.width, count(*)::int,
      min(m.step), (min(ARRAY[m.step::float8, m.value]))[2],
      (min(ARRAY[m.value, m.step::float8]))[2]::int, min(m.value),
      (max(ARRAY[m.value, -m.step::float8]))[2]::int * -1, max(m.value),
      max(m.step), (max(ARRAY[m.step::float8, m.value]))[2]
    FROM run_metrics m CROSS JOIN (VALUES ${widths}) AS w(width)
    WHERE ${where}
    GROUP BY m.run_id, w.width, m.name, m.step / w.width
    ON CONFLICT (run_id, width, name, bucket) DO UPDATE SET
      n = excluded.n, first_step = excluded.first_step, first_value = excluded.first_value,
      min_step = excluded.min_step, min_value = excluded.min_value, max_step = excluded.max_step,
      max_value = excluded.max_value, last_step = excluded.last_step, last_value = excluded.last_value`);
}

export interface SeriesSummary {
  name: string;
  n: number;
  firstStep: number;
  firstValue: number;
  lastStep: number;
  lastValue: number;
}

/** Every series of a run with its point count, first and last point, from the coarsest rollup (a few rows per name). */
export async function seriesSummaries(db: DbOrTx, runId: string): Promise<SeriesSummary[]> {
  const r = runMetricRollups;
  const rows = await db
    .select({
      name: r.name,
      n: sql<number>`sum(${r.n})::int`.mapWith(Number),
      firstStep: sql<number>`min(${r.firstStep})`.mapWith(Number),
      firstValue: sql<number>`(min(ARRAY[${r.firstStep}::float8, ${r.firstValue}]))[2]`.mapWith(Number),
      lastStep: sql<number>`max(${r.lastStep})`.mapWith(Number),
      lastValue: sql<number>`(max(ARRAY[${r.lastStep}::float8, ${r.lastValue}]))[2]`.mapWith(Number),
    })
    .from(r)
    .where(and(eq(r.runId, runId), eq(r.width, COARSEST)))
    .groupBy(r.name)
    .orderBy(asc(r.name));
  return rows;
}

/** One series to reduce in SQL: read at `width` (1 = the points themselves) into `buckets` step buckets. */
export interface BucketPlan {
  name: string;
  width: number;
  firstStep: number;
  lastStep: number;
  buckets: number;
}

/**
 * The lowest and highest point of each of `plan.buckets` equal step buckets of whole series, computed in the
 * database, for many series in one query. Same rule as downsampleSummaries in lib/services/downsample.ts
 * (same bucket arithmetic, ties to the earlier step), which the tests hold it to. Arrays come back as text:
 * decoding a few thousand rows per series costs far more than parsing two arrays, on PGlite above all.
 */
export async function bucketExtremes(
  db: DbOrTx,
  runId: string,
  plans: BucketPlan[],
): Promise<Map<string, [number, number][]>> {
  const rollupPlans = plans.filter((p) => p.width > 1);
  const [fromPoints, fromRollups] = await Promise.all([
    pointExtremes(
      db,
      runId,
      plans.filter((p) => p.width === 1),
    ),
    rollupExtremes(db, runId, rollupPlans),
  ]);
  for (const [name, points] of fromRollups) fromPoints.set(name, points);
  return fromPoints;
}

/**
 * Rollup plans: the rollup rows' lowest and highest points come back as four arrays per series and are bucketed
 * here. Bucketing them in SQL cost three times as long on PGlite (28 against 9 ms for 20 series of 157 rows,
 * bench:ui's comparison page; eight of them a page), for a few thousand candidates JavaScript reduces in well
 * under a millisecond. Same arithmetic and ties as the SQL below: a bucket's lowest point (ties to the earlier
 * step) and highest point (ties to the earlier step), both kept, in step order.
 */
async function rollupExtremes(
  db: DbOrTx,
  runId: string,
  plans: BucketPlan[],
): Promise<Map<string, [number, number][]>> {
  const out = new Map<string, [number, number][]>();
  if (plans.length === 0) return out;
  const widths = [...new Set(plans.map((p) => p.width))];
  const r = runMetricRollups;
  const rows = await db
    .select({
      name: r.name,
      width: r.width,
      minSteps: sql<string>`array_agg(${r.minStep} ORDER BY ${r.bucket})::text`,
      minValues: sql<string>`array_agg(${r.minValue} ORDER BY ${r.bucket})::text`,
      maxSteps: sql<string>`array_agg(${r.maxStep} ORDER BY ${r.bucket})::text`,
      maxValues: sql<string>`array_agg(${r.maxValue} ORDER BY ${r.bucket})::text`,
    })
    .from(r)
    .where(
      and(
        eq(r.runId, runId),
        inArray(r.width, widths),
        inArray(
          r.name,
          plans.map((p) => p.name),
        ),
      ),
    )
    .groupBy(r.name, r.width);
  for (const plan of plans) {
    const row = rows.find((x) => x.name === plan.name && x.width === plan.width);
    if (!row) continue;
    const bucketOf = (step: number) =>
      Math.min(
        plan.buckets - 1,
        Math.floor(((step - plan.firstStep) * plan.buckets) / (plan.lastStep - plan.firstStep + 1)),
      );
    const low = new Map<number, [number, number]>();
    const high = new Map<number, [number, number]>();
    const minSteps = parseArray(row.minSteps);
    const minValues = parseArray(row.minValues);
    const maxSteps = parseArray(row.maxSteps);
    const maxValues = parseArray(row.maxValues);
    for (let i = 0; i < minSteps.length; i++) {
      const lb = bucketOf(minSteps[i]);
      const l = low.get(lb);
      if (!l || below(minValues[i], minSteps[i], l[1], l[0])) low.set(lb, [minSteps[i], minValues[i]]);
      const hb = bucketOf(maxSteps[i]);
      const h = high.get(hb);
      if (!h || below(h[1], -h[0], maxValues[i], -maxSteps[i])) high.set(hb, [maxSteps[i], maxValues[i]]);
    }
    // One value per step, so a bucket whose lowest and highest point are the same point keeps it once.
    const byStep = new Map<number, number>();
    for (const [step, value] of [...low.values(), ...high.values()]) byStep.set(step, value);
    out.set(
      plan.name,
      [...byStep].sort((a, b) => a[0] - b[0]),
    );
  }
  return out;
}

/**
 * PostgreSQL's order of `ARRAY[value, step]`: by value, NaN above every number (Infinity included), then by step.
 */
function below(value: number, step: number, otherValue: number, otherStep: number): boolean {
  if (value !== otherValue) {
    if (Number.isNaN(otherValue)) return !Number.isNaN(value);
    if (Number.isNaN(value)) return false;
    return value < otherValue;
  }
  return step < otherStep;
}

/** Plans of width 1 (short series, read as points): bucketed in the database. */
async function pointExtremes(db: DbOrTx, runId: string, plans: BucketPlan[]): Promise<Map<string, [number, number][]>> {
  const out = new Map<string, [number, number][]>();
  if (plans.length === 0) return out;
  const values = sql.join(
    plans.map(
      (p) =>
        sql`(${p.name}::text, ${p.width}::int, ${p.firstStep}::int, ${p.lastStep - p.firstStep + 1}::float8, ${p.buckets}::float8)`,
    ),
    sql`, `,
  );
  const result = (await db.execute(sql`
    WITH plan(name, width, lo, span, buckets) AS (VALUES ${values}),
    candidate AS (
      SELECT plan.name, x.kind, x.step, x.value,
        least(plan.buckets - 1, floor((x.step - plan.lo)::float8 * plan.buckets / plan.span))::int AS b
      FROM plan
      JOIN run_metric_rollups r ON r.run_id = ${runId} AND r.width = plan.width AND r.name = plan.name
      CROSS JOIN LATERAL (VALUES (0, r.min_step, r.min_value), (1, r.max_step, r.max_value)) AS x(kind, step, value)
      WHERE plan.width > 1
      UNION ALL
      SELECT plan.name, x.kind, m.step, m.value,
        least(plan.buckets - 1, floor((m.step - plan.lo)::float8 * plan.buckets / plan.span))::int
      FROM plan
      JOIN run_metrics m ON m.run_id = ${runId} AND m.name = plan.name
      CROSS JOIN (VALUES (0), (1)) AS x(kind)
      WHERE plan.width = 1
    ),
    extreme AS (
      SELECT name, min(ARRAY[value, step::float8]) FILTER (WHERE kind = 0) AS low,
        max(ARRAY[value, -step::float8]) FILTER (WHERE kind = 1) AS high
      FROM candidate GROUP BY name, b
    ),
    point AS (
      SELECT name, low[2]::int AS step, low[1] AS value FROM extreme WHERE low IS NOT NULL
      UNION
      SELECT name, (-high[2])::int, high[1] FROM extreme WHERE high IS NOT NULL
    )
    SELECT name, array_agg(step ORDER BY step)::text AS steps, array_agg(value ORDER BY step)::text AS vals
    FROM point GROUP BY name`)) as unknown as { rows: { name: string; steps: string; vals: string }[] };
  for (const row of result.rows) {
    const steps = parseArray(row.steps);
    const vals = parseArray(row.vals);
    out.set(
      row.name,
      steps.map((step, i) => [step, vals[i]]),
    );
  }
  return out;
}

/** A one-dimensional numeric array in PostgreSQL's text form, e.g. `{1,2.5,-3e-05}`. */
function parseArray(text: string): number[] {
  const inner = text.slice(1, -1);
  return inner === '' ? [] : inner.split(',').map(Number);
}

/** The points of one series with lo ≤ step ≤ hi, in step order. */
export async function seriesPoints(
  db: DbOrTx,
  runId: string,
  name: string,
  lo: number,
  hi: number,
): Promise<MetricPoint[]> {
  return db
    .select({ step: runMetrics.step, value: runMetrics.value })
    .from(runMetrics)
    .where(
      and(eq(runMetrics.runId, runId), eq(runMetrics.name, name), gte(runMetrics.step, lo), lte(runMetrics.step, hi)),
    )
    .orderBy(asc(runMetrics.step));
}

/** The rollup rows of one series at one width for buckets fromBucket..toBucket, in step order. */
export async function seriesRollups(
  db: DbOrTx,
  runId: string,
  name: string,
  width: number,
  fromBucket: number,
  toBucket: number,
) {
  const r = runMetricRollups;
  return db
    .select()
    .from(r)
    .where(
      and(eq(r.runId, runId), eq(r.width, width), eq(r.name, name), gte(r.bucket, fromBucket), lte(r.bucket, toBucket)),
    )
    .orderBy(asc(r.bucket));
}

/** Every series' lowest and highest value over the whole run, from the coarsest rollup (a few rows per name). */
export async function seriesExtremes(db: DbOrTx, runId: string): Promise<Map<string, { min: number; max: number }>> {
  const r = runMetricRollups;
  const rows = await db
    .select({
      name: r.name,
      min: sql<number>`min(${r.minValue})`.mapWith(Number),
      max: sql<number>`max(${r.maxValue})`.mapWith(Number),
    })
    .from(r)
    .where(and(eq(r.runId, runId), eq(r.width, COARSEST)))
    .groupBy(r.name);
  return new Map(rows.map((row) => [row.name, { min: row.min, max: row.max }]));
}
