import 'server-only';
import { sql } from 'drizzle-orm';
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
 * Not VACUUM: on PGlite it would hold the only session while it scans a whole table.
 */
export async function analyzeStaleTables(db: DbOrTx): Promise<string[]> {
  // Change counts reach the statistics views at most once a second, when a session goes idle: the end of this
  // statement's transaction flushes what earlier ones left pending.
  await db.execute(sql`select pg_stat_force_next_flush()`);
  const { rows } = (await db.execute(sql`
    select format('%I.%I', s.schemaname, s.relname) as name
    from pg_stat_user_tables s
    join pg_class c on c.oid = s.relid
    where s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
       or (c.reltuples < 0 and pg_relation_size(s.relid) > 0)
       or pg_relation_size(s.relid) > (1.2 * greatest(c.relpages, 0) + 8) * current_setting('block_size')::int
    order by s.n_mod_since_analyze desc`)) as unknown as { rows: { name: string }[] };
  const analysed: string[] = [];
  for (const { name } of rows) {
    // The name comes from format('%I'), quoted by the database itself.
    await db.execute(sql.raw(`analyze ${name}`));
    analysed.push(name);
  }
  return analysed;
}

/** Starts the periodic analysis; returns its stop (which waits for a check in progress). */
export function startPgliteMaintenance(db: DbOrTx, intervalSeconds: number): () => Promise<void> {
  if (intervalSeconds <= 0) return async () => undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    const started = performance.now();
    running = analyzeStaleTables(db)
      .then((tables) => {
        if (tables.length > 0) {
          log.info({ tables, ms: Math.round(performance.now() - started) }, 'embedded database: statistics refreshed');
        }
      })
      .catch((err) => {
        if (!stopped) log.warn({ err: (err as Error).message }, 'embedded database: statistics refresh failed');
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
