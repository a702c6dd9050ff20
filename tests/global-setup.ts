import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { pgForks } from './pg-forks.mjs';

/**
 * Worker threads load esbuild bundles; build them once before any test file runs.
 *
 * Then, unless the run uses PostgreSQL or a data directory on disk, one migrated in-memory database is dumped
 * and every test process's database starts from that dump (TUNEBOARD_PGLITE_SNAPSHOT): creating an empty PGlite
 * database alone takes 4–5 s, in each fork and each file of the 'isolated' project (vitest.config.mts). The migrations' SQL runs here, through
 * Drizzle's PGlite migrator; the server's own migration step still runs on each loaded copy and finds nothing to
 * apply (the PostgreSQL run applies them through that step).
 *
 * On PostgreSQL with TUNEBOARD_TEST_PG_FORKS above 1, each fork gets a database of its own, created here next to
 * DATABASE_URL's (tests/setup-env.ts points the fork at it).
 */
export default async function setup() {
  // Each Vitest project (vitest.config.mts) runs global setup; once is enough, and forks inherit what it set.
  if (process.env.TUNEBOARD_TEST_SETUP_DONE) return;
  process.env.TUNEBOARD_TEST_SETUP_DONE = '1';
  execFileSync(process.execPath, ['scripts/build-worker.mjs'], { stdio: 'inherit' });
  if (process.env.DATABASE_URL) return databasesPerFork(process.env.DATABASE_URL, pgForks());
  if (process.env.TUNEBOARD_PGLITE_SNAPSHOT) return;
  if ((process.env.TUNEBOARD_DATA_DIR ?? 'memory://') !== 'memory://') return;
  const db = await PGlite.create('memory://');
  try {
    await migrate(drizzle(db), { migrationsFolder: path.resolve('lib/db/migrations') });
    const dump = await db.dumpDataDir('none');
    const file = path.join(os.tmpdir(), `tuneboard-test-pglite-${process.pid}.tar`);
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    // Test workers are forked after global setup and inherit this environment.
    process.env.TUNEBOARD_PGLITE_SNAPSHOT = file;
    return () => fs.rmSync(file, { force: true });
  } finally {
    await db.close();
  }
}

/** Empty databases `<name>_fork1`… beside DATABASE_URL's, one per fork (each fork's server migrates its own). */
async function databasesPerFork(url: string, forks: number): Promise<(() => Promise<void>) | undefined> {
  if (forks === 1) return undefined;
  const base = decodeURIComponent(new URL(url).pathname.slice(1));
  const names = Array.from({ length: forks }, (_, i) => `${base}_fork${i + 1}`);
  const recreate = (create: boolean) =>
    withClient(url, async (client) => {
      for (const name of names) {
        const quoted = client.escapeIdentifier(name);
        // FORCE: a run killed midway leaves sessions on its databases until the server notices they are gone.
        await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
        if (create) await client.query(`CREATE DATABASE ${quoted}`);
      }
    });
  try {
    await recreate(true);
  } catch (err) {
    throw new Error(
      `TUNEBOARD_TEST_PG_FORKS=${forks} gives each test fork a database of its own, which the role in DATABASE_URL ` +
        `could not create (${(err as Error).message}): grant it CREATEDB (ALTER ROLE … CREATEDB) or leave the setting out`,
    );
  }
  // Forks are started after global setup and inherit this.
  process.env.TUNEBOARD_TEST_DATABASE_URL = url;
  return () => recreate(false);
}

async function withClient(url: string, fn: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
