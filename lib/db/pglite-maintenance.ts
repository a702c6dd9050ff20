import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from './client';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('db');

/**
 * Planner statistics for the embedded database. A PostgreSQL server's autovacuum re-analyses a table once about
 * a tenth of it has changed; PGlite runs PostgreSQL in single-user mode, where no autovacuum runs, so its tables
 * were never analysed at all and the planner guessed every row count. It guessed wrong where it matters: a
 * page of a 50,000-event job read from a cursor near its start became a bitmap scan of every later event plus
 * a sort (30 to 56 ms, and linear in the job's size) instead of an index walk that stops after one page
 * (under 1 ms once the table had statistics).
 *
 * Every `intervalSeconds` this analyses the tables autovacuum would (more than 50 rows plus 10 % changed since
 * the last analysis), and tables that hold data but were never analysed (a database from before this existed,
 * or bulk-loaded). One table per statement, so other queries take their turns in between; ANALYZE reads a
 * bounded sample (30,000 rows by default), about 0.1 to 0.3 s for a large table on PGlite.
 *
 * The change counts live in memory and are gone when the server stops, so changes made less than one check
 * before a restart were never counted: a table filled in a short run kept the statistics of when it was small.
 * With 9,500 models analysed at one row, the planner took the (entity, created_at, id) index to find one model
 * by id and walked the entity's every model on each request (1.7 ms instead of a primary-key probe). So a table
 * whose file has grown well past the size its statistics were taken at (20 % and 8 pages) is analysed too.
 *
 * Not VACUUM, which holds the only session for a whole table's scan: vacuumSmallTables below does it for small tables.
 */
export async function analyzeStaleTables(db: DbOrTx): Promise<string[]> {
  return eachTable(
    db,
    'analyze',
    sql`
    where s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
       or (c.reltuples < 0 and pg_relation_size(s.relid) > 0)
       or pg_relation_size(s.relid) > (1.2 * greatest(c.relpages, 0) + 8) * current_setting('block_size')::int
    order by s.n_mod_since_analyze desc`,
  );
}

/**
 * Runs `command` on each user table that `filter` (a where and order by clause over the table's statistics `s` and
 * catalog entry `c`) selects, one table per statement so that other queries take their turns in between.
 */
async function eachTable(db: DbOrTx, command: 'analyze' | 'vacuum', filter: SQL): Promise<string[]> {
  // Change counts reach the statistics views at most once a second, when a session goes idle: the end of this
  // statement's transaction flushes what earlier ones left pending.
  await db.execute(sql`select pg_stat_force_next_flush()`);
  const { rows } = (await db.execute(sql`
    select format('%I.%I', s.schemaname, s.relname) as name
    from pg_stat_user_tables s
    join pg_class c on c.oid = s.relid
    ${filter}`)) as unknown as { rows: { name: string }[] };
  for (const { name } of rows) {
    // The name comes from format('%I'), quoted by the database itself.
    await db.execute(sql.raw(`${command} ${name}`));
  }
  return rows.map((r) => r.name);
}

/**
 * Past this size (table, indexes and TOAST together) a table is not vacuumed: VACUUM holds the embedded
 * database's only session for the whole scan, and every request waits that long.
 */
export const VACUUM_MAX_BYTES = 8 * 2 ** 20;

/**
 * VACUUM for the small tables updated in place all the time. Without autovacuum, the dead row versions an update
 * leaves are never reclaimed, so such a table and its indexes grow with every update however few rows it holds:
 * `training_workers`, updated on every poll of every worker (an indexed column, so no in-page update), took
 * 1.4 MB of heap and 1.1 MB of index for its two rows after 50,000 polls, and every scan of it read all of that.
 * VACUUM makes the space reusable, so the table stops growing where it is (it does not give it back to the file
 * system; VACUUM FULL would, with an exclusive lock). On that table it took 14 ms, and scans were 20 % faster.
 *
 * Tables past autovacuum's own threshold (50 rows plus 20 % of the table dead) and no larger than `maxBytes`;
 * larger tables are left as they are (see VACUUM_MAX_BYTES).
 */
export async function vacuumSmallTables(db: DbOrTx, maxBytes = VACUUM_MAX_BYTES): Promise<string[]> {
  return eachTable(
    db,
    'vacuum',
    sql`
    where s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
      and pg_total_relation_size(s.relid) <= ${maxBytes}
    order by s.n_dead_tup desc`,
  );
}

/** Starts the periodic analysis and vacuum; returns its stop (which waits for a check in progress). */
export function startPgliteMaintenance(db: DbOrTx, intervalSeconds: number): () => Promise<void> {
  if (intervalSeconds <= 0) return async () => undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    const started = performance.now();
    running = (async () => {
      const tables = await analyzeStaleTables(db);
      if (tables.length > 0) {
        log.info({ tables, ms: Math.round(performance.now() - started) }, 'embedded database: statistics refreshed');
      }
      const vacuumStarted = performance.now();
      const vacuumed = await vacuumSmallTables(db);
      if (vacuumed.length > 0) {
        log.debug(
          { tables: vacuumed, ms: Math.round(performance.now() - vacuumStarted) },
          'embedded database: small tables vacuumed',
        );
      }
    })()
      .catch((err) => {
        if (!stopped) log.warn({ err: (err as Error).message }, 'embedded database: maintenance failed');
      })
      .finally(() => {
        running = null;
      });
  };
  // The first check comes soon after start-up: a database restored or bulk-loaded before it has no statistics.
  const first = setTimeout(tick, Math.min(intervalSeconds, 10) * 1000);
  const every = setInterval(tick, intervalSeconds * 1000);
  first.unref();
  every.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(every);
    await running;
  };
}
