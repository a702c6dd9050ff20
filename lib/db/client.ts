import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import { config } from '@/lib/config';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A transaction handle has the same query surface; repositories accept either. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

interface DbHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  close: () => Promise<void>;
}

const MIGRATIONS_FOLDER = path.join(process.cwd(), 'lib', 'db', 'migrations');
// Any constant works; it only has to be the same for every server instance sharing the database.
const MIGRATION_LOCK_ID = 7_340_021;

async function open(): Promise<DbHandle> {
  const url = config.databaseUrl;
  if (url) {
    const { Pool } = await import('pg');
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const { migrate } = await import('drizzle-orm/node-postgres/migrator');
    const pool = new Pool({ connectionString: url, max: config.databasePoolSize });
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
    return { db, kind: 'postgres', close: () => pool.end() };
  }

  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const dataDir = config.dataDir;
  if (!dataDir.startsWith('memory://')) fs.mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
  const client = await PGlite.create(dataDir);
  const db = drizzle(client, { schema }) as unknown as Db;
  await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
  return { db, kind: 'pglite', close: () => client.close() };
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
