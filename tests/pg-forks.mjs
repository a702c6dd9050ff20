// Plain JavaScript (ESM), not TypeScript: vitest.config.mts imports it, and Vite's native config loader (its default
// to come) loads a config's imports with Node itself, which on Node 20 runs no TypeScript. Types: pg-forks.d.mts.

/**
 * The PostgreSQL run's fork count (TUNEBOARD_TEST_PG_FORKS, default 1), read by vitest.config.mts for its forks and
 * by tests/global-setup.ts for their databases: one reading for both.
 */
export function pgForks() {
  const forks = Number(process.env.TUNEBOARD_TEST_PG_FORKS ?? 1);
  if (!Number.isInteger(forks) || forks < 1)
    throw new Error('TUNEBOARD_TEST_PG_FORKS must be a whole number, 1 or more');
  return forks;
}
