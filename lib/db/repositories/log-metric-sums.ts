import 'server-only';
import { and, asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { logMetricSums } from '../schema';

/**
 * The running sums of one model, step and split, locked for the rest of the transaction so that two logs to
 * one step add up instead of one overwriting the other. Call inside a transaction.
 */
export async function lockLogMetricSums(
  tx: DbOrTx,
  key: { modelId: string; step: number; split: string },
): Promise<unknown> {
  await tx
    .insert(logMetricSums)
    .values({ ...key, sums: {} })
    .onConflictDoNothing();
  const [row] = await tx
    .select({ sums: logMetricSums.sums })
    .from(logMetricSums)
    .where(
      and(eq(logMetricSums.modelId, key.modelId), eq(logMetricSums.step, key.step), eq(logMetricSums.split, key.split)),
    )
    .for('update');
  return row?.sums;
}

export async function saveLogMetricSums(
  tx: DbOrTx,
  key: { modelId: string; step: number; split: string },
  sums: object,
) {
  await tx
    .update(logMetricSums)
    .set({ sums: sums as Record<string, unknown> })
    .where(
      and(eq(logMetricSums.modelId, key.modelId), eq(logMetricSums.step, key.step), eq(logMetricSums.split, key.split)),
    );
}

/** Every step and split's pooled sums of a model, in step order: what the length-pinning check reads. */
export async function listLogMetricSums(tx: DbOrTx, modelId: string) {
  return tx
    .select({ step: logMetricSums.step, split: logMetricSums.split, sums: logMetricSums.sums })
    .from(logMetricSums)
    .where(eq(logMetricSums.modelId, modelId))
    .orderBy(asc(logMetricSums.step));
}
