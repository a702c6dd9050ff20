/**
 * The server process's start-up, run once by Next.js (instrumentation.ts) under the Node.js runtime: applies pending
 * migrations before the first request (so a fresh clone needs no separate migrate step), then starts the built-in
 * training runner and job recovery. Modules are imported one by one, in order: the fast path is installed before
 * anything slow to load.
 */
/** The longest a stopping server waits for open requests and connections (Kubernetes' grace period is 30 s). */
const SHUTDOWN_GRACE_MS = 25_000;

export async function startServer(): Promise<void> {
  // First: the liveness probe answers ahead of Next.js's routing, even while migrations run (see the module).
  const { installFastPath, beginDraining } = await import('@/lib/api/fast-path');
  installFastPath();
  // A bad TUNEBOARD_* value stops the server here, every bad variable named, before anything is served.
  const { assertValidConfig, ConfigError } = await import('@/lib/config');
  let settings;
  try {
    settings = assertValidConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Next.js would keep serving 500s after a failed hook; a server with a bad setting should not start at all.
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  // A stop signal (SIGTERM from an orchestrator, Ctrl-C's SIGINT) is handled from here on, even while the database
  // starts. First, answers start closing their connections and the training workers stop, so that none of them keeps
  // a connection open (fast-path.ts, builtin-runner.ts). Then the usage still in its batch is written
  // (lib/services/usage.ts), and Next's own handler stops listening and exits once every connection has closed.
  // Next's handler alone exited before the usage write, and never exited while a worker or a client polled on a
  // kept-alive connection. Eval runs in flight release their leases before that usage write.
  const { startBuiltinRunner, stopBuiltinRunner } = await import('@/lib/jobs/server/builtin-runner');
  const { stopParkedClaims } = await import('@/lib/jobs/server/claim-wakeups');
  const { flushUsage } = await import('@/lib/services/usage');
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const others = process.listeners(signal);
    process.removeAllListeners(signal);
    const exitCode = signal === 'SIGTERM' ? 143 : 130;
    // Once: a second signal gets Node's default, which ends the process at once.
    process.once(signal, () => {
      beginDraining();
      stopBuiltinRunner();
      // Workers' long-polled claims answer now (null) instead of holding the server for their wait.
      stopParkedClaims();
      // The backstop: whatever still holds the server this long after the signal (a stream that goes on, a
      // connection nobody closes) is cut, as an orchestrator's SIGKILL would, rather than left running for good.
      setTimeout(() => process.exit(exitCode), SHUTDOWN_GRACE_MS).unref();
      const stalled = new Promise((resolve) => setTimeout(resolve, 5000).unref());
      // Eval runs in flight stop where they are and release their leases, for another server to take over at once;
      // then the usage batch is written, their last chat calls' included. Each wait is bounded.
      const evals = Promise.race([
        import('@/lib/services/eval-runner').then((m) => m.stopEvalRunner()),
        new Promise((resolve) => setTimeout(resolve, 3000).unref()),
      ]).catch(() => undefined);
      void Promise.race([evals.then(() => flushUsage()), stalled]).finally(() => {
        // Without another handler (NEXT_MANUAL_SIG_HANDLE), nobody else would end the process.
        if (others.length === 0) process.exit(exitCode);
        for (const listener of others) (listener as (s: NodeJS.Signals) => void)(signal);
      });
    });
  }
  process.once('exit', stopBuiltinRunner);
  const { logger, routeConsoleToLogger } = await import('@/lib/logger');
  // Every line on stdout one JSON object: Next.js reports errors it catches with console.error, as text.
  if (settings.isProduction) routeConsoleToLogger();
  // Liveness on a port of its own, answered by a thread the request thread's load cannot delay (./liveness.ts);
  // before the database, so that a long migration is not taken for a dead server.
  if (settings.healthPort !== undefined) {
    const { startLiveness } = await import('./liveness');
    try {
      const liveness = await startLiveness({ port: settings.healthPort, stallMs: settings.healthStallMs });
      logger.info({ port: liveness.port }, 'liveness probe listening (GET /livez)');
    } catch (err) {
      // An orchestrator probing a port nobody answers would restart the server forever: say why, and stop.
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(1);
    }
  }
  const { getDbHandle } = await import('@/lib/db/client');
  const handle = await getDbHandle();
  logger.info({ database: handle.kind }, 'database ready');
  await startBuiltinRunner({ port: settings.port, embeddedDatabase: handle.kind === 'pglite' });
  // Tinker training clients whose worker died, silent sessions, expired saves (lib/services/tinker/sweeper.ts).
  const { startTinkerSweeper } = await import('@/lib/services/tinker/sweeper');
  await startTinkerSweeper({ embeddedDatabase: handle.kind === 'pglite' });
  // Eval runs execute in this process (lib/services/eval-runner.ts): queued ones, and those a dead server left RUNNING.
  const { startEvalRunner } = await import('@/lib/services/eval-runner');
  startEvalRunner({ embeddedDatabase: handle.kind === 'pglite' });
  // Files a crash, a vanished client or a failing store left behind (rows are always deleted first); in the
  // background, at start and every few minutes.
  const { startArtifactSweeper } = await import('@/lib/services/artifact-sweep');
  startArtifactSweeper();
  // Base models named by a Hugging Face Hub id start downloading now, as vLLM loads its model at start; chat
  // answers 503 with the progress until they are in the cache (lib/services/hub-models.ts).
  const { prefetchHubModels } = await import('@/lib/services/base-models');
  try {
    prefetchHubModels();
  } catch (err) {
    logger.warn({ err }, 'could not read the base-models file to fetch Hub models');
  }
}
