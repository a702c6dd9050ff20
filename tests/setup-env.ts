// Unit and route tests never touch the developer's .data/ database: each Vitest worker gets a
// fresh in-memory PGlite unless DATABASE_URL points the whole run at a PostgreSQL server.
process.env.TUNEBOARD_DATA_DIR ??= 'memory://';
process.env.TUNEBOARD_ARTIFACT_DIR ??= `${process.env.TMPDIR ?? '/tmp'}/tuneboard-test-artifacts-${process.pid}`;

// On PostgreSQL with a database per fork (TUNEBOARD_TEST_PG_FORKS, created by tests/global-setup.ts): this fork's.
// VITEST_POOL_ID numbers the forks from 1 and stays with a fork across its files.
if (process.env.TUNEBOARD_TEST_DATABASE_URL) {
  const url = new URL(process.env.TUNEBOARD_TEST_DATABASE_URL);
  url.pathname = `${url.pathname}_fork${process.env.VITEST_POOL_ID ?? 1}`;
  process.env.DATABASE_URL = url.toString();
}
