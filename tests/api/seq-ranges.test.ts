import { sql, type SQLWrapper } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/lib/db/client';
import {
  pageEvents,
  pageEventsInScope,
  pageEventsInScopeQuery,
  pageEventsQuery,
} from '@/lib/db/repositories/job-event-pages';
import { trajectoryGroupsQuery } from '@/lib/db/repositories/training';
import { accessibleEntityIds } from '@/lib/services/accounts';
import { createModel, createRlJob, createUser, principalOf, seedEvents } from '../support/helpers';

/**
 * A job's events and a model's trajectory groups are listed in seq order, which the primary key also gives.
 * Knowing only that a few owners share many rows, the planner (PostgreSQL's and PGlite's alike) costed "walk the
 * primary key from the start and skip other owners' rows" below "walk this owner's index", and a page of a job
 * created after a 1M-event job took 0.7 s. These tests give the planner that picture (a few owners, many rows,
 * fresh statistics) and check that no page query reads another owner's rows (lib/db/repositories/keyset.ts,
 * seqRange).
 */

/**
 * Rows the scans of `table` in a plan read: those they passed on and those they threw away (EXPLAIN ANALYZE's
 * "Actual Rows" and "Rows Removed by Filter", per loop).
 */
function rowsRead(plan: Record<string, unknown>, table: string): number {
  const own =
    plan['Relation Name'] === table
      ? (Number(plan['Actual Rows'] ?? 0) + Number(plan['Rows Removed by Filter'] ?? 0)) *
        Number(plan['Actual Loops'] ?? 1)
      : 0;
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return children.reduce((sum, child) => sum + rowsRead(child, table), own);
}

async function readBy(query: SQLWrapper, table: string): Promise<number> {
  const db = await getDb();
  const result = (await db.execute(sql`explain (analyze, format json) ${query}`)) as unknown as {
    rows: { 'QUERY PLAN': { Plan: Record<string, unknown> }[] }[];
  };
  return rowsRead(result.rows[0]['QUERY PLAN'][0].Plan, table);
}

/** Rows for `owner` generated in the database: many, in one statement. */
async function bulkEvents(jobId: string, n: number) {
  const db = await getDb();
  await db.execute(sql`insert into job_events (job_id, type, data)
    select ${jobId}::uuid, 'gradient_step', jsonb_build_object('step', g) from generate_series(1, ${n}::int) g`);
}

async function bulkGroups(modelId: string, n: number) {
  const db = await getDb();
  await db.execute(sql`insert into trajectory_groups (model_id, source, split, step, group_index, num_trajectories, data)
    select ${modelId}::uuid, case when g % 3 = 0 then 'train' else 'log' end,
           case when g % 5 = 0 then 'val' else 'train' end, g / 8, g % 8, 4, '{"trajectories":[]}'::json
    from generate_series(1, ${n}::int) g`);
}

describe("a page of an owner's rows after and before other owners' many rows", () => {
  it("reads only that job's events, with or without a cursor, in either order and by type", async () => {
    const db = await getDb();
    const user = await createUser();
    const model = await createModel(user);
    const [before, small, after] = [
      await createRlJob(user, model.id),
      await createRlJob(user, model.id),
      await createRlJob(user, model.id),
    ];
    await bulkEvents(before, 20_000);
    const rows = await seedEvents(small, [
      { type: 'training_started', data: {} },
      ...Array.from({ length: 150 }, (_, i) => ({ type: 'gradient_step' as const, data: { loss: 1 / (i + 1) } })),
    ]);
    // A later job with many events too: a page read newest first must not walk it from the other end.
    await bulkEvents(after, 20_000);
    await db.execute(sql`analyze job_events`);

    // A page of 20 or 21 (and a probe or two for its first and last ids), never the other jobs' 40,000.
    const read: number[] = [];
    // pageEventsInScope runs one prepared statement, built by what builds this one with the values in place.
    const entityIds = accessibleEntityIds(await principalOf(user));
    for (const afterId of [undefined, rows[10].id]) {
      read.push(await readBy(pageEventsInScopeQuery({ jobId: small, entityIds, afterId, limit: 20 }), 'job_events'));
      const page = await pageEventsInScope(db, { jobId: small, entityIds, afterId, limit: 20 });
      expect(page.kind).toBe('page');
    }
    const mid = rows[75].seq;
    for (const opts of [
      { order: 'asc' as const },
      { order: 'desc' as const },
      { order: 'asc' as const, afterSeq: mid },
      { order: 'asc' as const, beforeSeq: mid },
      { order: 'desc' as const, afterSeq: mid },
      { order: 'desc' as const, beforeSeq: mid },
      { order: 'desc' as const, type: 'training_started' as const },
      { order: 'asc' as const, type: 'gradient_step' as const, afterSeq: mid },
    ]) {
      read.push(await readBy(pageEventsQuery(db, small, { ...opts, limit: 21 }).query, 'job_events'));
      const { rows: got } = await pageEvents(db, small, { ...opts, limit: 21 });
      expect(got.length).toBeGreaterThan(0);
      expect(got.every((e) => e.jobId === small)).toBe(true);
    }
    // At most this job's own 151 events and a few probes: for a type the planner may read them all and sort rather
    // than take the (job_id, type, seq) index (PostgreSQL did, in one CI run in three), which is cheap at this size
    // and which it does not choose for a job of many events. The old queries read 30,003.
    expect(Math.max(...read)).toBeLessThan(rows.length + 50);
  });

  it("reads only that model's trajectory groups, whatever the filter", async () => {
    const db = await getDb();
    const user = await createUser();
    const [before, model, after] = [await createModel(user), await createModel(user), await createModel(user)];
    await bulkGroups(before.id, 20_000);
    await bulkGroups(model.id, 400);
    await bulkGroups(after.id, 20_000);
    await db.execute(sql`analyze trajectory_groups`);
    const [{ seq: mid }] = (await trajectoryGroupsQuery(db, model.id, { limit: 200 })).slice(-1);
    const read = new Map<string, number>();
    for (const opts of [
      {},
      { afterSeq: mid },
      { split: 'val' },
      { source: 'train' as const },
      { split: 'val', source: 'log' as const, afterSeq: mid },
      { step: 20 },
      { step: 20, split: 'val' },
    ]) {
      const query = trajectoryGroupsQuery(db, model.id, { ...opts, limit: 21 });
      read.set(JSON.stringify(opts), await readBy(query, 'trajectory_groups'));
      const got = await trajectoryGroupsQuery(db, model.id, { ...opts, limit: 21 });
      expect(got.length).toBeGreaterThan(0);
      expect(got.every((g) => g.modelId === model.id)).toBe(true);
      expect(got.map((g) => g.seq)).toEqual(got.map((g) => g.seq).sort((a, b) => a - b));
    }
    // Unfiltered, a page reads its 21 rows (trajectory_groups_model_seq_idx gives them in order; without that
    // index the model's every group was read and sorted). A split or source filter also reads the model's rows it
    // skips, never another model's: at most its 400.
    expect(read.get('{}')).toBeLessThan(50);
    expect(read.get(JSON.stringify({ afterSeq: mid }))).toBeLessThan(50);
    expect(Math.max(...read.values())).toBeLessThanOrEqual(400);
  });
});
