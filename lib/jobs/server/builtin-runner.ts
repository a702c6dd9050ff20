import 'server-only';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { trainingHandlers } from '../worker/handlers';
import { pruneWorkerRegistry, recoverStaleJobs } from './queue';
import { bootWorkerToken } from './worker-token';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('jobs');

/**
 * The server's own training capacity: N worker child processes (TUNEBOARD_RUNNER_CONCURRENCY, default 1,
 * 0 = none) speaking the HTTP worker protocol back to this server, so training never blocks a request,
 * plus a sweeper that recovers jobs whose worker went away. Started once per server process.
 */
type RunnerState = { bootId: string; children: ChildProcess[] };
const globalForRunner = globalThis as unknown as {
  __tuneboardRunner?: RunnerState;
  __tuneboardRunnerStopped?: boolean;
};

const SWEEP_MS = 10_000;

export async function startBuiltinRunner(opts: { port: number; embeddedDatabase: boolean }) {
  if (globalForRunner.__tuneboardRunner || globalForRunner.__tuneboardRunnerStopped) return;
  const bootId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const state: RunnerState = { bootId, children: [] };
  globalForRunner.__tuneboardRunner = state;

  // With the embedded database this process is the only server, so every RUNNING job of a built-in worker
  // belongs to a dead predecessor: recover those now instead of waiting out their lease.
  const deadWorkerPrefix = opts.embeddedDatabase ? { prefix: 'builtin:', except: `builtin:${bootId}:` } : undefined;
  const sweep = async (first: boolean) => {
    try {
      const outcome = await recoverStaleJobs(first ? { deadWorkerPrefix } : {});
      if (outcome.requeued || outcome.failed) log.info({ outcome }, 'recovered jobs');
      await pruneWorkerRegistry();
    } catch (err) {
      log.error({ err }, 'job recovery failed');
    }
  };
  await sweep(true);
  setInterval(() => void sweep(false), SWEEP_MS).unref();

  const concurrency = config.runnerConcurrency;
  if (concurrency <= 0 || Object.keys(trainingHandlers()).length === 0) return;
  for (let i = 0; i < concurrency; i++) spawnWorker(state, i, opts.port, 0);
}

function workerCommand(): { command: string; args: string[] } {
  // Bundled by scripts/build-worker.mjs (npm run build / dev); the TypeScript source through tsx otherwise.
  const bundled = path.join(process.cwd(), '.tuneboard', 'worker.mjs');
  if (fs.existsSync(bundled)) return { command: process.execPath, args: [bundled] };
  return {
    command: process.execPath,
    args: ['--import', 'tsx', path.join(process.cwd(), 'lib', 'jobs', 'worker', 'worker-main.ts')],
  };
}

function spawnWorker(state: RunnerState, index: number, port: number, restarts: number) {
  // A stop signal that came while the first sweep ran, or before a restart's back-off ended: no worker to start.
  if (globalForRunner.__tuneboardRunnerStopped) return;
  const { command, args } = workerCommand();
  const child = spawn(command, args, {
    env: {
      // The child is configured like its parent (plus its own server URL and token): pass the environment on whole.
      // eslint-disable-next-line no-restricted-properties
      ...process.env,
      TUNEBOARD_SERVER_URL: `http://127.0.0.1:${port}`,
      TUNEBOARD_WORKER_TOKEN: bootWorkerToken(),
      TUNEBOARD_WORKER_ID: `builtin:${state.bootId}:${index}`,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  state.children[index] = child;
  child.on('exit', (code, signal) => {
    if (signal === 'SIGTERM' || globalForRunner.__tuneboardRunnerStopped) return;
    log.error({ worker: index, code, signal }, 'training worker exited; restarting');
    // Back off so a worker that crashes at start-up does not spin.
    setTimeout(() => spawnWorker(state, index, port, restarts + 1), Math.min(30_000, 1000 * 2 ** restarts)).unref();
  });
}

/**
 * Stops the worker children for good (a stopping server: its signal handler, then its exit). Called as soon as a stop
 * signal arrives, not at exit: a child polls this server on a kept-alive connection every few seconds, and the HTTP
 * server's close waits for every open connection, so a child still polling held a stopping server open for good.
 */
export function stopBuiltinRunner() {
  globalForRunner.__tuneboardRunnerStopped = true;
  for (const child of globalForRunner.__tuneboardRunner?.children ?? []) child.kill('SIGTERM');
}
