/**
 * A training worker process: `npm run worker` (or the built-in runner's child). It talks to a server over
 * the HTTP worker protocol only; it never opens the database, so it works beside PGlite as well as against
 * a shared PostgreSQL from another machine.
 *
 * Env: TUNEBOARD_SERVER_URL (default http://127.0.0.1:$PORT), TUNEBOARD_WORKER_TOKEN (required),
 * TUNEBOARD_WORKER_ID (default <hostname>:<pid>).
 */
import os from 'node:os';
import v8 from 'node:v8';
import { trainingHandlers } from './handlers';
import { httpProtocol } from './http-protocol';
import { runWorkerLoop } from './runner';
import { enableTrainingThreads, isSftHelperThread, runSftHelperThread } from './training-threads';

// Relaxed SIMD turns the engine's multiply-adds into FMA (+30–40 % training throughput). Node ≥ 22 has it on;
// Node 20 needs the flag, set before the first WebAssembly heap is created (lib/engine/README.md).
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

async function main() {
  const token = process.env.TUNEBOARD_WORKER_TOKEN;
  if (!token) {
    console.error('TUNEBOARD_WORKER_TOKEN is required (the server accepts the same value for its worker routes)');
    process.exit(2);
  }
  const baseUrl = process.env.TUNEBOARD_SERVER_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  const workerId = process.env.TUNEBOARD_WORKER_ID ?? `${os.hostname()}:${process.pid}`;
  const handlers = trainingHandlers();
  if (Object.keys(handlers).length === 0) {
    console.error('[worker] this build has no training handlers; nothing to run');
    process.exit(1);
  }
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop.abort());
  // The parent server going away must not leave an orphaned trainer behind.
  process.on('disconnect', () => stop.abort());
  console.log(`[worker] ${workerId} polling ${baseUrl} for ${Object.keys(handlers).join(', ')} jobs`);
  await runWorkerLoop(httpProtocol({ baseUrl, token, workerId }), handlers, { signal: stop.signal });
}

// The same script is the entry of the SFT helper thread (training-threads.ts), so the bundle needs no second file.
if (isSftHelperThread()) {
  runSftHelperThread();
} else {
  if (process.argv[1]) enableTrainingThreads(process.argv[1]);
  main().catch((err) => {
    console.error('[worker] fatal', err);
    process.exit(1);
  });
}
