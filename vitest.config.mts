import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions compare wall-clock times (the sign-in timing that must not reveal whether an email has
 * an account). Beside another fork on a 2-core machine, the fastest of a few runs still varies by half, so they run
 * alone after everything else.
 */
const TIMING_FILES = ['tests/hardening/enumeration.test.ts'];

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // `server-only` throws outside React Server Components; tests run server modules directly.
      'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
    },
  },
  test: {
    environment: 'node',
    // Route tests open a PGlite instance per worker; forks keep WASM heaps isolated.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['tests/setup-env.ts'],
    globalSetup: ['tests/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['lib/**/*.test.ts', 'app/**/*.test.ts', 'tests/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...TIMING_FILES],
          // Vitest's default (one fork per core but one) leaves a 2-core machine running one file at a time, while
          // a route-test fork spends much of its time waiting on its database thread: two forks there took the
          // suite from 508 to 343 s. On PostgreSQL the files share one database, so that run keeps one fork.
          maxWorkers: process.env.DATABASE_URL ? 1 : Math.max(2, os.availableParallelism()),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING_FILES,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
