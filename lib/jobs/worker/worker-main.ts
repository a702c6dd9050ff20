/**
 * A training worker process: `npm run worker` (or the built-in runner's child). It talks to a server over
 * the HTTP worker protocol only; it never opens the database, so it works beside PGlite as well as against
 * a shared PostgreSQL from another machine.
 *
 * Env: TUNEBOARD_SERVER_URL (default http://127.0.0.1:$PORT), TUNEBOARD_WORKER_TOKEN (required),
 * TUNEBOARD_WORKER_ID (default <hostname>:<pid>).
 */
import v8 from 'node:v8';
import { assertValidConfig } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import { trainingHandlers } from './handlers';
import { httpProtocol } from './http-protocol';
import { runWorkerLoop, WorkerTokenRefusedError } from './runner';
import { enableTrainingThreads, isSftHelperThread, runSftHelperThread } from './training-threads';

// Relaxed SIMD turns the engine's multiply-adds into FMA (+30–40 % training throughput). Node ≥ 22 has it on;
// Node 20 needs the flag, set before the first WebAssembly heap is created (lib/engine/README.md).
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const log = componentLogger('worker');

async function main() {
  const { workerToken: token, serverUrl: baseUrl, workerId } = assertValidConfig();
  if (!token) {
    log.fatal('TUNEBOARD_WORKER_TOKEN is required (the server accepts the same value for its worker routes)');
    process.exit(2);
  }
  const handlers = trainingHandlers();
  if (Object.keys(handlers).length === 0) {
    log.fatal('this build has no training handlers; nothing to run');
    process.exit(1);
  }
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop.abort());
  // The parent server going away must not leave an orphaned trainer behind.
  process.on('disconnect', () => stop.abort());
  log.info({ workerId, server: baseUrl, kinds: Object.keys(handlers) }, 'polling for jobs');
  const protocol = httpProtocol({ baseUrl, token, workerId });
  try {
    await runWorkerLoop(protocol, handlers, { signal: stop.signal });
    // Stopped cleanly (its job, if any, finished): a queued job only this worker could train says so at once.
    await protocol.signOff?.();
  } catch (err) {
    if (!(err instanceof WorkerTokenRefusedError)) throw err;
    // The same status as a missing token: a supervisor shows a failed start, not a worker that never trains.
    log.fatal({ server: baseUrl, answer: err.answer.message }, err.message);
    process.exit(2);
  }
}

// The same script is the entry of the SFT helper thread (training-threads.ts), so the bundle needs no second file.
if (isSftHelperThread()) {
  runSftHelperThread();
} else {
  if (process.argv[1]) enableTrainingThreads(process.argv[1]);
  main().then(
    // Stopped and signed off: exit now. Left to the event loop, the process lingered for the HTTP client's idle
    // kept-alive socket (4 s), and a stopping server waited for that connection to close before it could exit.
    () => process.exit(0),
    (err) => {
      log.fatal({ err }, 'worker stopped');
      process.exit(1);
    },
  );
}
