import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import type { PgliteThread } from './pglite-connection';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('db');

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle has the same query surface; repositories accept either. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

interface DbHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** The embedded database's thread (PGlite only): its heap and recycle count, for health and benchmarks. */
  embedded?: PgliteThread;
  close: () => Promise<void>;
}

const MIGRATIONS_FOLDER = path.join(process.cwd(), 'lib', 'db', 'migrations');
// Any constant works; it only has to be the same for every server instance sharing the database.
const MIGRATION_LOCK_ID = 7_340_021;

async function open(): Promise<DbHandle> {
  const url = config.databaseUrl;
  const pg = await import('pg');
  const { Pool } = pg.default ?? pg;
  const { withStatementCache } = await import('./statement-cache');
  const { withAnswersInTurn } = await import('./pg-answers-in-turn');
  const cacheLimit = config.dbStatementCache;
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { migrate } = await import('drizzle-orm/node-postgres/migrator');
  let pool: InstanceType<typeof Pool>;
  let kind: DbHandle['kind'];
  let embedded: PgliteThread | undefined;
  if (url) {
    pool = new Pool({
      connectionString: url,
      max: config.databasePoolSize,
      Client: withStatementCache(withAnswersInTurn((pg.default ?? pg).Client), cacheLimit),
    });
    kind = 'postgres';
  } else {
    // The embedded database runs on a thread of its own, reached through node-postgres like a server
    // (lib/db/pglite-connection.ts): same driver, same SQL, and the request thread never runs PostgreSQL.
    const dataDir = config.dataDir;
    if (!dataDir.startsWith('memory://')) fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
    const { PgliteThread, PglitePool, pgliteClientClass } = await import('./pglite-connection');
    embedded = new PgliteThread(dataDir, config.pgliteRecycleHeapBytes, config.pgliteSnapshot);
    await embedded.waitReady();
    // One session: queries pipelined over a few clients, a transaction holding it alone.
    pool = new PglitePool(embedded, withStatementCache(pgliteClientClass(embedded), cacheLimit), config.pglitePipeline);
    kind = 'pglite';
  }
  // A dropped connection to a PostgreSQL server is replaced on the next query; pg emits it here first.
  pool.on('error', (err) => log.error({ err: err.message }, 'database connection error'));
  const db = drizzle(pool, { schema }) as unknown as Db;
  // Several server instances (and test workers) may start at once: serialise migrations.
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    client.release();
  }
  // PGlite has no autovacuum to keep the planner's statistics current (lib/db/pglite-maintenance.ts).
  const stopMaintenance =
    kind === 'pglite'
      ? (await import('./pglite-maintenance')).startPgliteMaintenance(db, config.pgliteAnalyzeSeconds)
      : async () => undefined;
  return {
    db,
    kind,
    embedded,
    close: async () => {
      await stopMaintenance();
      await pool.end();
      await embedded?.close();
    },
  };
}

// PGlite must be opened once per process (two handles on one directory lose writes), and Next's dev
// server re-evaluates modules on reload, so the handle lives on globalThis rather than in module scope.
const globalForDb = globalThis as unknown as { __tuneboardDb?: Promise<DbHandle> };

export function getDbHandle(): Promise<DbHandle> {
  if (!globalForDb.__tuneboardDb) {
    globalForDb.__tuneboardDb = open().catch((err) => {
      globalForDb.__tuneboardDb = undefined;
      throw err;
    });
  }
  return globalForDb.__tuneboardDb;
}

export async function getDb(): Promise<Db> {
  return (await getDbHandle()).db;
}

export async function closeDb(): Promise<void> {
  const handle = globalForDb.__tuneboardDb;
  globalForDb.__tuneboardDb = undefined;
  if (handle) await (await handle).close();
}

export async function pingDb(): Promise<void> {
  const db = await getDb();
  await db.execute(sql`select 1`);
}
