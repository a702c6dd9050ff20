import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from './client';
import { PgliteThread, pgliteClientClass } from './pglite-connection';
import { analyzeStaleTables } from './pglite-maintenance';

let thread: PgliteThread;
let pool: pg.Pool;
let db: Db;
beforeAll(async () => {
  thread = new PgliteThread('memory://', 2 ** 40);
  await thread.waitReady();
  pool = new pg.Pool({ Client: pgliteClientClass(thread), max: 1 });
  db = drizzle(pool) as unknown as Db;
}, 180_000);
afterAll(async () => {
  await pool.end();
  await thread.close();
});

const rows = async (query: ReturnType<typeof sql>) =>
  ((await db.execute(query)) as unknown as { rows: Record<string, unknown>[] }).rows;
const plan = async () =>
  (await rows(sql`explain select * from ev where job_id = 2 and seq > 10 order by seq limit 101`))
    .map((r) => r['QUERY PLAN'])
    .join('\n');

describe('analyzeStaleTables', () => {
  it('analyses tables holding unanalysed changes, once, so the planner walks the index for a page of a large job', async () => {
    await db.execute(sql`create table ev (seq serial primary key, job_id int not null, data text)`);
    await db.execute(sql`create index ev_job_seq on ev (job_id, seq)`);
    await db.execute(sql`insert into ev (job_id, data) select 1, 'x' from generate_series(1, 100)`);
    await db.execute(sql`insert into ev (job_id, data) select 2, repeat('y', 80) from generate_series(1, 20000)`);
    // Without statistics the planner guesses a few hundred rows for the job and fetches them all to sort.
    expect(await plan()).toMatch(/Sort/);

    expect(await analyzeStaleTables(db)).toContain('public.ev');
    const [stats] = await rows(sql`select reltuples from pg_class where relname = 'ev'`);
    expect(Number(stats.reltuples)).toBe(20100);
    expect(await plan()).not.toMatch(/Sort/);
    expect(await plan()).toMatch(/Index Scan/);

    // Nothing changed since: nothing to do. A few changes stay under the threshold (50 + 10 % of the table).
    expect(await analyzeStaleTables(db)).toEqual([]);
    await db.execute(sql`insert into ev (job_id) select 3 from generate_series(1, 100)`);
    expect(await analyzeStaleTables(db)).toEqual([]);
    await db.execute(sql`insert into ev (job_id) select 3 from generate_series(1, 2000)`);
    expect(await analyzeStaleTables(db)).toEqual(['public.ev']);
  });

  it('analyses a table that grew while its change counts were lost (a restart), and leaves it be after', async () => {
    await db.execute(sql`create table grown (id int primary key, owner int not null, data text)`);
    await db.execute(sql`insert into grown select 1, 1, 'x'`);
    await db.execute(sql`analyze grown`);
    await db.execute(sql`insert into grown select g, 1, repeat('z', 100) from generate_series(2, 5000) g`);
    // The counters of the run that inserted them are gone, as after a restart.
    await db.execute(sql`select pg_stat_force_next_flush()`);
    await db.execute(sql`select pg_stat_reset()`);
    const [counts] = await rows(sql`select n_mod_since_analyze from pg_stat_user_tables where relname = 'grown'`);
    expect(Number(counts?.n_mod_since_analyze ?? 0)).toBe(0);

    expect(await analyzeStaleTables(db)).toContain('public.grown');
    const [stats] = await rows(sql`select reltuples from pg_class where relname = 'grown'`);
    expect(Number(stats.reltuples)).toBe(5000);
    expect(await analyzeStaleTables(db)).not.toContain('public.grown');
  });
});
