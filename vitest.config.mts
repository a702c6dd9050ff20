import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // `server-only` throws outside React Server Components; tests run server modules directly.
      'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
    },
  },
  test: {
    include: ['lib/**/*.test.ts', 'app/**/*.test.ts', 'tests/**/*.test.ts'],
    environment: 'node',
    // Route tests open a PGlite instance per worker; forks keep WASM heaps isolated.
    pool: 'forks',
    // Vitest's default (one fork per core but one) leaves a 2-core machine running one file at a time, while a
    // route-test fork spends much of its time waiting on its database thread: two forks there took the suite
    // from 508 to 343 s. On PostgreSQL the files share one database, so that run keeps Vitest's default.
    maxWorkers: process.env.DATABASE_URL ? undefined : Math.max(2, os.availableParallelism()),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['tests/setup-env.ts'],
    globalSetup: ['tests/global-setup.ts'],
  },
});
