// Unit and route tests never touch the developer's .data/ database: each Vitest worker gets a
// fresh in-memory PGlite unless DATABASE_URL points the whole run at a PostgreSQL server.
process.env.TUNEBOARD_DATA_DIR ??= 'memory://';
process.env.TUNEBOARD_ARTIFACT_DIR ??= `${process.env.TMPDIR ?? '/tmp'}/tuneboard-test-artifacts-${process.pid}`;
