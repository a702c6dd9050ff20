import { afterAll, beforeAll, inject } from 'vitest';

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

/*
 * A file of the 'main' project shares its process with the files before and after it (vitest.config.mts), so a
 * change it makes to process.env, even one it undoes, can reach modules that read the environment while it was made
 * (a storage client, a limit) and change what later files see. Such a file must run in the 'isolated' project; this
 * fails it, naming the variables, instead of leaving a failure in whichever file happens to run next.
 */
if (inject('sharedProcess')) {
  const guard = globalThis as unknown as { __tuneboardEnvWrites?: Set<string> };
  if (!guard.__tuneboardEnvWrites) {
    const writes = (guard.__tuneboardEnvWrites = new Set<string>());
    process.env = new Proxy(process.env, {
      // Only writes that change something: libraries re-save what they read (debug deletes an unset DEBUG on load).
      set(env, key, value) {
        if (Reflect.get(env, key) !== String(value)) writes.add(String(key));
        return Reflect.set(env, key, value);
      },
      deleteProperty(env, key) {
        if (Reflect.has(env, key)) writes.add(String(key));
        return Reflect.deleteProperty(env, key);
      },
    });
  }
  const writes = guard.__tuneboardEnvWrites;
  let before: Record<string, string | undefined> = {};
  beforeAll(() => {
    writes.clear();
    before = { ...process.env };
  });
  afterAll(() => {
    if (writes.size === 0) return;
    const names = [...writes].join(', ');
    for (const key of writes) {
      if (before[key] === undefined) delete process.env[key];
      else process.env[key] = before[key];
    }
    writes.clear();
    throw new Error(
      `this file changed process.env (${names}) in a process it shares with other test files: add it to ISOLATED_FILES in vitest.config.mts`,
    );
  });
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by the 'main' project, whose files share one process (vitest.config.mts). */
    sharedProcess: boolean;
  }
}
