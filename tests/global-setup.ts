import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';

/**
 * Worker threads load esbuild bundles; build them once before any test file runs.
 *
 * Then, unless the run uses PostgreSQL or a data directory on disk, one migrated in-memory database is dumped
 * and every test file's database starts from that dump (TUNEBOARD_PGLITE_SNAPSHOT): creating an empty PGlite
 * database alone takes about 3.5 s, in each of the ~80 files that open one. The migrations' SQL runs here, through
 * Drizzle's PGlite migrator; the server's own migration step still runs on each loaded copy and finds nothing to
 * apply (the PostgreSQL run applies them through that step).
 */
export default async function setup() {
  execFileSync(process.execPath, ['scripts/build-worker.mjs'], { stdio: 'inherit' });
  if (process.env.DATABASE_URL || process.env.TUNEBOARD_PGLITE_SNAPSHOT) return;
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
