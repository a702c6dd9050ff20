import 'server-only';
import { and, gt, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { authThrottle } from '../schema';

/** The latest `blocked_until` among `keys` that is still in the future, if any. */
export async function blockedUntil(db: DbOrTx, keys: string[], now: Date): Promise<Date | null> {
  const rows = await db
    .select({ until: authThrottle.blockedUntil })
    .from(authThrottle)
    .where(and(inArray(authThrottle.key, keys), gt(authThrottle.blockedUntil, now)));
  let latest: Date | null = null;
  for (const r of rows) if (r.until && (!latest || r.until > latest)) latest = r.until;
  return latest;
}

/**
 * Counts one failure for `key` in one statement (concurrent failures all count): a window older than
 * `windowMs` starts afresh; from the `free`-th failure on, the key is blocked for 1 s, 2 s, 4 s… up to `maxBlockMs`.
 */
export async function recordFailure(
  db: DbOrTx,
  key: string,
  opts: { free: number; windowMs: number; maxBlockMs: number; now: Date },
): Promise<void> {
  const windowStart = new Date(opts.now.getTime() - opts.windowMs);
  const failures = sql`case when ${authThrottle.windowStartedAt} < ${windowStart} then 1 else ${authThrottle.failures} + 1 end`;
  const blockMs = (n: typeof failures) =>
    sql`case when ${n} >= ${opts.free} then ${opts.now}::timestamptz + least(${opts.maxBlockMs}::float8, 1000 * power(2::float8, ${n} - ${opts.free})) * interval '1 millisecond' else null end`;
  await db
    .insert(authThrottle)
    .values({
      key,
      failures: 1,
      windowStartedAt: opts.now,
      blockedUntil: opts.free <= 1 ? new Date(opts.now.getTime() + 1000) : null,
    })
    .onConflictDoUpdate({
      target: authThrottle.key,
      set: {
        failures,
        windowStartedAt: sql`case when ${authThrottle.windowStartedAt} < ${windowStart} then ${opts.now}::timestamptz else ${authThrottle.windowStartedAt} end`,
        blockedUntil: blockMs(failures),
      },
    });
}

export async function clearKey(db: DbOrTx, key: string): Promise<void> {
  await db.delete(authThrottle).where(inArray(authThrottle.key, [key]));
}

/** Rows whose window and block are both over: nothing left to remember. */
export async function deleteStale(db: DbOrTx, before: Date): Promise<void> {
  await db
    .delete(authThrottle)
    .where(
      sql`${authThrottle.windowStartedAt} < ${before} and (${authThrottle.blockedUntil} is null or ${authThrottle.blockedUntil} < ${before})`,
    );
}
