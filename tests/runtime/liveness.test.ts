import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { startLiveness, type Liveness } from '@/lib/runtime/liveness';

/**
 * The liveness port (lib/runtime/liveness.ts): answered by a thread of its own while the request thread is busy, and
 * 503 once the request thread has stopped turning for longer than the stall limit.
 */
let liveness: Liveness | undefined;
afterEach(async () => {
  await liveness?.stop();
  liveness = undefined;
});

/**
 * A prober on another thread (this one is the one kept busy). It warms up first (a thread's start and its first
 * fetch took over half a second on a loaded machine), then probes `delayMs` after `go()`.
 */
async function prober(url: string) {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    fetch(workerData).then((r) => r.arrayBuffer()).then(() => parentPort.postMessage('ready'));
    parentPort.once('message', (delayMs) => setTimeout(async () => {
      const t = performance.now();
      const res = await fetch(workerData);
      parentPort.postMessage({ status: res.status, body: await res.json(), ms: performance.now() - t });
    }, delayMs));`,
    { eval: true, workerData: url },
  );
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    go(delayMs: number): Promise<{ status: number; body: unknown; ms: number }> {
      const answer = new Promise<{ status: number; body: unknown; ms: number }>((resolve) =>
        worker.once('message', (m) => void worker.terminate().then(() => resolve(m))),
      );
      worker.postMessage(delayMs);
      return answer;
    },
  };
}

/** Keeps this thread from turning for `ms`, as a handler stuck in a loop would. */
function hold(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('the liveness port', () => {
  it('answers GET /livez from its own thread while the request thread is busy', async () => {
    liveness = await startLiveness({ port: 0, stallMs: 10_000 });
    const url = `http://127.0.0.1:${liveness.port}/livez`;
    expect(await (await fetch(url)).json()).toEqual({ status: 'ok', request_thread_lag_ms: expect.any(Number) });
    // Probed 200 ms into a 1.5 s hold of this thread: answered at once, not after the hold.
    const probe = (await prober(url)).go(200);
    const held = performance.now();
    hold(1500);
    const answer = await probe;
    expect(answer.status).toBe(200);
    expect((answer.body as { status: string }).status).toBe('ok');
    // The answer arrived while this thread was still held (on a loaded machine, scheduling adds some slack).
    expect(answer.ms).toBeLessThan(1000);
    expect(performance.now() - held).toBeGreaterThanOrEqual(1500);
  });

  it('answers 503 stalled once the request thread has not turned for longer than the limit', async () => {
    liveness = await startLiveness({ port: 0, stallMs: 300 });
    const url = `http://127.0.0.1:${liveness.port}/livez`;
    const probe = (await prober(url)).go(900);
    hold(1500);
    const answer = await probe;
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ status: 'stalled', request_thread_lag_ms: expect.any(Number) });
    expect((answer.body as { request_thread_lag_ms: number }).request_thread_lag_ms).toBeGreaterThan(300);
    // Turning again, it is live again.
    await new Promise((r) => setTimeout(r, 120));
    expect((await fetch(url)).status).toBe(200);
  });

  it('answers anything but GET /livez with a JSON 404 or 405, and refuses a taken port naming the setting', async () => {
    liveness = await startLiveness({ port: 0, stallMs: 10_000 });
    const base = `http://127.0.0.1:${liveness.port}`;
    const missing = await fetch(`${base}/v1/health`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Not Found: this port answers GET /livez' });
    const post = await fetch(`${base}/livez`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await expect(startLiveness({ port: liveness.port, stallMs: 10_000 })).rejects.toThrow(
      `the liveness port ${liveness.port} (TUNEBOARD_HEALTH_PORT) cannot be listened on: listen EADDRINUSE`,
    );
  });
});
