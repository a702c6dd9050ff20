import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from './client';
import { PgliteThread, pgliteClientClass } from './pglite-connection';
import { analyzeStaleTables, vacuumSmallTables } from './pglite-maintenance';

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

/** The planner's estimate of job 2's rows in `ev`. */
const jobRowsEstimate = async () =>
  Number(/rows=(\d+)/.exec(String((await rows(sql`explain select * from ev where job_id = 2`))[0]['QUERY PLAN']))![1]);

describe('analyzeStaleTables', () => {
  it('analyses tables holding unanalysed changes, once, so the planner walks the index for a page of a large job', async () => {
    await db.execute(sql`create table ev (seq serial primary key, job_id int not null, data text)`);
    await db.execute(sql`create index ev_job_seq on ev (job_id, seq)`);
    await db.execute(sql`insert into ev (job_id, data) select 1, 'x' from generate_series(1, 100)`);
    await db.execute(sql`insert into ev (job_id, data) select 2, repeat('y', 80) from generate_series(1, 20000)`);
    // Without statistics the planner guesses a few hundred rows for the job's 20,000. (With PostgreSQL's default
    // random_page_cost it then fetched them all to sort; at the embedded database's 1.1 it walks the index anyway.)
    expect(await jobRowsEstimate()).toBeLessThan(2000);

    expect(await analyzeStaleTables(db)).toContain('public.ev');
    const [stats] = await rows(sql`select reltuples from pg_class where relname = 'ev'`);
    expect(Number(stats.reltuples)).toBe(20100);
    expect(await jobRowsEstimate()).toBeGreaterThan(15_000);
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

describe('vacuumSmallTables', () => {
  const size = async (table: string) =>
    Number((await rows(sql`select pg_total_relation_size(${table}::regclass) as bytes`))[0].bytes);
  // What a worker's poll does to training_workers: its row updated, an indexed column included.
  const polls = async (table: string, n: number) => {
    for (let i = 0; i < n; i++) await db.execute(sql.raw(`update ${table} set seen = seen + 1`));
  };
  const workersTable = async (table: string) => {
    await db.execute(sql.raw(`create table ${table} (id text primary key, seen int not null, status text)`));
    await db.execute(sql.raw(`create index ${table}_seen on ${table} (seen)`));
    await db.execute(sql.raw(`insert into ${table} values ('a', 0, 'idle'), ('b', 0, 'idle')`));
  };

  it('keeps a small table updated in place from growing, where it would grow with every update', async () => {
    // A check every 300 polls (a check a minute sees that many with ten workers polling every 2 s). First
    // the same polls without VACUUM, for comparison (dropped before any check runs).
    await workersTable('unvacuumed');
    const unvacuumed: number[] = [];
    for (let check = 0; check < 8; check++) {
      await polls('unvacuumed', 300);
      unvacuumed.push(await size('unvacuumed'));
    }
    await db.execute(sql`drop table unvacuumed`);
    await workersTable('polled');
    const vacuumed: number[] = [];
    for (let check = 0; check < 8; check++) {
      await polls('polled', 300);
      expect(await vacuumSmallTables(db)).toContain('public.polled');
      vacuumed.push(await size('polled'));
    }
    // Without: a few pages more every check, for good (2,400 updates of two rows: 104 to 296 KiB here). With: flat
    // (112 to 144 KiB).
    expect(unvacuumed[7]).toBeGreaterThan(unvacuumed[3] * 1.5);
    expect(vacuumed[7]).toBeLessThanOrEqual(vacuumed[3] * 1.1);
  });

  it('leaves a table larger than the limit alone, however many dead rows it has', async () => {
    await workersTable('large');
    await polls('large', 500);
    const bytes = await size('large');
    expect(await vacuumSmallTables(db, bytes - 1)).not.toContain('public.large');
    expect(await vacuumSmallTables(db, bytes)).toContain('public.large');
  });
});
