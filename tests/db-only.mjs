// Plain JavaScript (ESM), as pg-forks.mjs (vitest.config.mts imports it). Types: db-only.d.mts.

/*
 * The files CI's second Vitest pass, on PostgreSQL (`npm test -- --db-only`, which runs tests/, lib/services/ and
 * lib/jobs/), leaves out: they run once, in the PGlite pass, because running them on PostgreSQL too cannot show
 * anything the PGlite pass does not. Each group says why; tests/ci/db-only.test.ts checks what can be checked.
 */

/** Whole folders that never reach the database: the engine, the real-model loop with the Python worker (its
 * server's queries are the job tests'), the layer rules and the docs. */
export const DB_ONLY_EXCLUDED_FOLDERS = ['tests/engine/**', 'tests/real-models/**', 'tests/lint/**', 'tests/docs/**'];

/**
 * Files whose imports never reach lib/db/ (tests/ci/db-only.test.ts follows their static imports with esbuild and
 * fails if one does), nor start a server or process that opens a database: a database cannot change their outcome.
 * llama-cpp.test.ts alone took 58 s of the PostgreSQL pass; the isolated ones each cost a fresh process.
 */
export const NO_DATABASE_FILES = [
  'tests/inference/llama-cpp.test.ts',
  'tests/inference/pool.test.ts',
  'tests/runtime/liveness.test.ts',
  'tests/jobs/sft-form-defaults.test.ts',
  'lib/jobs/worker/training-threads.test.ts',
  'lib/services/base-models.test.ts',
  'tests/api/fast-path-relay.test.ts',
];

/**
 * Files that check the engines' numbers and outputs through the chat and download routes: the Hugging Face engine
 * against Transformers (hf-chat), its reasoning split (hf-reasoning), llama.cpp against the WebAssembly engine (the
 * last two). The statements they send to the database are ones the files left in send. Measured for all but hf-chat
 * (left out before, for the same reason) with PostgreSQL's log_statement = 'all' (docs/testing.md): every statement
 * text they sent was also sent by chat.test.ts, checkpoints.test.ts, checkpoint-download.test.ts, models.test.ts,
 * accounts.test.ts, upstream.test.ts, vllm.test.ts or tinker/api.test.ts, but for a four-row batch of the usage upsert
 * whose one- and two-row forms they send. The two llama.cpp files took 179 of the PostgreSQL pass's 590 test seconds
 * (beside the browser specs), hf-reasoning 13.
 */
export const SAME_STATEMENTS_FILES = [
  'tests/inference/hf-chat.test.ts',
  'tests/inference/hf-reasoning.test.ts',
  'tests/inference/hf-llama-cpp-chat.test.ts',
  'tests/inference/hf-gguf-download.test.ts',
];

/**
 * Event-loop stall files of the timing project: they measure threads, not the database (the PGlite pass runs them).
 */
export const THREAD_TIMING_FILES = [
  'tests/hardening/dataset-upload-stall.test.ts',
  'tests/inference/structured-output-health.test.ts',
];

/** Everything the PostgreSQL pass leaves out, as vitest.config.mts's exclude patterns. */
export function dbOnlyExcluded() {
  return [...DB_ONLY_EXCLUDED_FOLDERS, ...NO_DATABASE_FILES, ...SAME_STATEMENTS_FILES, ...THREAD_TIMING_FILES];
}
