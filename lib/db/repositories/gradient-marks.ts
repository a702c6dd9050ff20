import 'server-only';
import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { gradientStepMarks } from '../schema';

/**
 * Records x = before+1 … before+n of a model's training curve: the time (the transaction's, so one batch of a job's
 * events shares it) and the running total of trainable tokens, continued from x = before. Called wherever the
 * curve's points are appended, in the same transaction.
 */
export async function appendGradientMarks(
  db: DbOrTx,
  modelId: string,
  before: number,
  points: readonly Record<string, number>[],
) {
  if (points.length === 0) return;
  const m = gradientStepMarks;
  const [prev] =
    before > 0
      ? await db
          .select({ tokens: m.tokens })
          .from(m)
          .where(and(eq(m.modelId, modelId), eq(m.x, before)))
      : [];
  let tokens = prev?.tokens ?? 0;
  const rows = points.map((p, i) => {
    const t = p.num_trainable_tokens;
    // A point without a (finite) count adds nothing: the axis then undercounts, never invents tokens.
    if (typeof t === 'number' && Number.isFinite(t) && t > 0) tokens += t;
    return { modelId, x: before + i + 1, recordedAt: sql`now()`, tokens };
  });
  for (let i = 0; i < rows.length; i += 5000)
    await db
      .insert(m)
      .values(rows.slice(i, i + 5000) as never)
      .onConflictDoNothing();
}

/**
 * At most about `maxKnots` marks of a model's curve, evenly spaced in x, with its first and last always kept:
 * `[x, epoch milliseconds, tokens]` in x order. Time and tokens only grow with x, so straight lines between these
 * knots place any point of the curve within one knot spacing. Primary-key probes, whatever the curve's length.
 */
export async function gradientMarkKnots(
  db: DbOrTx,
  modelId: string,
  maxKnots: number,
): Promise<[number, number, number][]> {
  const [last] = await db
    .select({ x: sql<number>`max(${gradientStepMarks.x})`.mapWith(Number) })
    .from(gradientStepMarks)
    .where(eq(gradientStepMarks.modelId, modelId));
  const lastX = last?.x ?? 0;
  if (!(lastX >= 1)) return [];
  const every = Math.max(1, Math.ceil(lastX / Math.max(2, maxKnots - 1)));
  const result = (await db.execute(sql`
    SELECT x, (extract(epoch from recorded_at) * 1000)::float8 AS t, tokens
    FROM gradient_step_marks
    WHERE model_id = ${modelId}
      AND x IN (SELECT generate_series(1, ${lastX}::int, ${every}::int) UNION SELECT ${lastX}::int)
    ORDER BY x`)) as { rows: { x: unknown; t: unknown; tokens: unknown }[] };
  return result.rows.map((r) => [Number(r.x), Number(r.t), Number(r.tokens)]);
}
