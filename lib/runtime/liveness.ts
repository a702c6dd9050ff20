import { Worker } from 'node:worker_threads';

/**
 * Liveness answered where the request thread's work cannot delay it (issue 44 item 3). Under bench:gateway's mixed
 * load (200 API request loops and 50 chat streams) `/v1/health` waits behind whatever the request thread is running
 * (Next's promise chains, a turn's share of handlers): p99 62-145 ms on a 2-core machine. An orchestrator that kills a
 * server for a slow answer would kill a busy one. So with TUNEBOARD_HEALTH_PORT a thread of its own, with its own
 * event loop and HTTP server, answers `GET /livez` on that port.
 *
 * It must still notice a request thread that has stopped turning (a busy loop, a deadlock of promises that never
 * settle does not count): the request thread writes the time into shared memory every BEAT_MS, and `/livez` answers 503
 * `stalled` once that time is older than TUNEBOARD_HEALTH_STALL_SECONDS. `/v1/health` stays what it was: the
 * request path's own probe (readiness), answered in one turn of the request thread.
 */
const BEAT_MS = 50;

/** The thread's whole program: node:http only, so it needs no bundle and starts in a few milliseconds. */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const beat = new Float64Array(workerData.beat);
const server = http.createServer((req, res) => {
  const path = (req.url || '').split('?')[0];
  const send = (status, body, extra) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...extra });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
  };
  if (path !== '/livez') return send(404, { detail: 'Not Found: this port answers GET /livez' });
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { detail: 'Method Not Allowed' }, { allow: 'GET, HEAD' });
  // How long ago the request thread last turned, less the beat's own period.
  const lag = Math.max(0, Date.now() - beat[0] - workerData.beatMs);
  const stalled = lag > workerData.stallMs;
  send(stalled ? 503 : 200, { status: stalled ? 'stalled' : 'ok', request_thread_lag_ms: Math.round(lag) });
});
server.keepAliveTimeout = 65000;
server.on('error', (err) => parentPort.postMessage({ error: err.message }));
server.listen(workerData.port, () => parentPort.postMessage({ listening: server.address().port }));
`;

export interface Liveness {
  /** The port it listens on (the one asked for, or the one the system chose for 0). */
  port: number;
  stop(): Promise<void>;
}

/** Starts the liveness thread on `port` (0: any free port); rejects when the port cannot be listened on. */
export async function startLiveness(opts: { port: number; stallMs: number }): Promise<Liveness> {
  const shared = new SharedArrayBuffer(8);
  const beat = new Float64Array(shared);
  beat[0] = Date.now();
  const timer = setInterval(() => (beat[0] = Date.now()), BEAT_MS);
  timer.unref();
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { beat: shared, port: opts.port, stallMs: opts.stallMs, beatMs: BEAT_MS },
  });
  // Never what keeps a stopping server alive.
  worker.unref();
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (message: { listening?: number; error?: string }) =>
      message.error === undefined ? resolve(message.listening!) : reject(new Error(message.error)),
    );
    worker.once('error', reject);
  }).catch(async (err: Error) => {
    clearInterval(timer);
    await worker.terminate();
    throw new Error(`the liveness port ${opts.port} (TUNEBOARD_HEALTH_PORT) cannot be listened on: ${err.message}`);
  });
  return {
    port,
    async stop() {
      clearInterval(timer);
      await worker.terminate();
    },
  };
}
