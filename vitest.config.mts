import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { dbOnlyExcluded } from './tests/db-only.mjs';
import { pgForks } from './tests/pg-forks.mjs';

/**
 * Files whose assertions compare wall-clock times: the sign-in timing that must not reveal whether an email has an
 * account, and the event loop's longest stall while heavy work runs on other threads. Beside another fork on a 2-core
 * machine the fastest of a few runs still varies by half, and beside CI's browser specs a thread is preempted for
 * 380 ms with nothing of its own to do, so they run alone after everything else. Each gets a fresh process.
 */
const TIMING_FILES = [
  'tests/hardening/enumeration.test.ts',
  'tests/hardening/dataset-upload-stall.test.ts',
  'tests/inference/structured-output-health.test.ts',
];
/**
 * Files that change process.env (even for a moment) or swap modules: each runs in a fresh process of its own. Every
 * other file shares its fork's process, module cache and database with the files before it (the 'main' project's
 * `isolate: false`): a fresh process and database per file cost about 2.5 s each, most of the suite's time.
 * tests/setup-env.ts fails a shared file that writes process.env, naming this list.
 */
const ISOLATED_FILES = [
  'lib/jobs/worker/training-threads.test.ts',
  'lib/services/base-models.test.ts',
  'tests/jobs/claim-shutdown.test.ts',
  'tests/api/datasets.test.ts',
  'tests/api/fast-path.test.ts',
  'tests/api/fast-path-relay.test.ts',
  'tests/api/log.test.ts',
  // Mocks the logger to read what the worker logs on a cancel.
  'tests/jobs/runner-cancel-log.test.ts',
  'tests/hardening/brute-force.test.ts',
  'tests/hardening/checkpoint-upload-limit.test.ts',
  'tests/hardening/dataset-uploads.test.ts',
  'tests/hardening/fast-path-server.test.ts',
  'tests/hardening/storage-faults.test.ts',
  'tests/inference/hf-chat.test.ts',
  'tests/inference/hf-gguf-download.test.ts',
  'tests/inference/hf-llama-cpp-chat.test.ts',
  'tests/inference/hf-reasoning.test.ts',
  'tests/inference/settings.test.ts',
  'tests/inference/structured-output-compile.test.ts',
  'tests/inference/upstream.test.ts',
  'tests/inference/vllm.test.ts',
  'tests/jobs/training-handlers.test.ts',
  'tests/jobs/worker-registry.test.ts',
  'tests/real-models/hf-loop.test.ts',
  'tests/real-models/hub-model.test.ts',
  'tests/services/hub-models.test.ts',
  'tests/storage.test.ts',
  'tests/tinker/api.test.ts',
  'tests/tinker/sampler-hf.test.ts',
  'tests/tinker/sampler-vllm.test.ts',
];
/**
 * Vitest's default (one fork per core but one) leaves a 2-core machine running one file at a time, while a route-test
 * fork spends much of its time waiting on its database thread: two forks there took the suite from 508 to 343 s. On
 * PostgreSQL the files share DATABASE_URL's database, so that run has one fork unless TUNEBOARD_TEST_PG_FORKS asks for
 * more, each with a database of its own (global setup).
 */
const FORKS = process.env.DATABASE_URL ? pgForks() : Math.max(2, os.availableParallelism());
/**
 * Files a run leaves out: TUNEBOARD_TEST_EXCLUDE's, comma-separated, and with TUNEBOARD_TEST_DB_ONLY=1
 * (scripts/test-all.sh's --db-only, CI's PostgreSQL pass) those tests/db-only.mjs lists. Vitest's own --exclude is
 * not applied to the projects below.
 */
const EXCLUDED = [
  ...(process.env.TUNEBOARD_TEST_EXCLUDE?.split(',').filter(Boolean) ?? []),
  ...(process.env.TUNEBOARD_TEST_DB_ONLY === '1' ? dbOnlyExcluded() : []),
];

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
          exclude: [...configDefaults.exclude, ...EXCLUDED, ...TIMING_FILES, ...ISOLATED_FILES],
          isolate: false,
          provide: { sharedProcess: true },
          maxWorkers: FORKS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ISOLATED_FILES,
          exclude: [...configDefaults.exclude, ...EXCLUDED],
          maxWorkers: FORKS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING_FILES,
          exclude: [...configDefaults.exclude, ...EXCLUDED],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
