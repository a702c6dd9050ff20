import 'server-only';
import { and, asc, desc, eq, gt, lt, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { jobEvents } from '../schema';

/**
 * A page of a job's events in either order, after or before a cursor (its seq), in list order. The scan
 * runs away from the cursor, so a page before it is read backwards and then reversed: an index range scan
 * of job_events_job_seq_idx either way.
 */
export async function pageEvents(
  db: DbOrTx,
  jobId: string,
  opts: { order: 'asc' | 'desc'; afterSeq?: number; beforeSeq?: number; limit: number },
) {
  const backwards = opts.beforeSeq !== undefined;
  const scanDesc = (opts.order === 'desc') !== backwards;
  const conditions: SQL[] = [eq(jobEvents.jobId, jobId)];
  const cursor = opts.afterSeq ?? opts.beforeSeq;
  if (cursor !== undefined) conditions.push(scanDesc ? lt(jobEvents.seq, cursor) : gt(jobEvents.seq, cursor));
  const rows = await db
    .select()
    .from(jobEvents)
    .where(and(...conditions))
    .orderBy(scanDesc ? desc(jobEvents.seq) : asc(jobEvents.seq))
    .limit(opts.limit);
  return { rows, backwards };
}
