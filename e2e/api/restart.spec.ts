import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { LONG_SFT_DATASET } from '../fixtures/seed';

/**
 * Stopping and restarting a server. Kills a server (and its training worker) with SIGKILL in the middle of a job,
 * starts it again on the same embedded database, and checks that the job is not forgotten: it ends with
 * training_failed and a clear message, nothing follows that event, and the model trains again afterwards. A server
 * stopped with SIGTERM writes its pending usage first, and stops even while a client polls it.
 */
// Every test starts its own server on this port and folder: one at a time.
test.describe.configure({ mode: 'serial' });
const PORT = 3160;
const BASE = `http://127.0.0.1:${PORT}`;
const DIR = path.join(process.cwd(), '.data', 'e2e-restart');

const ENV = {
  ...process.env,
  PORT: String(PORT),
  DATABASE_URL: '',
  TUNEBOARD_DATA_DIR: path.join(DIR, 'pglite'),
  TUNEBOARD_ARTIFACT_DIR: path.join(DIR, 'artifacts'),
  NEXT_TELEMETRY_DISABLED: '1',
};

function start(): ChildProcess {
  return spawn('npm', ['run', 'start'], { env: ENV, stdio: 'ignore', detached: true });
}

/** The pids of a process's children (Linux). */
function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function up(): Promise<void> {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${BASE}/v1/system-check`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not start');
}

/**
 * Waits until every process of the server's group has exited. The spawned process is npm, which exits before the
 * Next.js server under it has finished its shutdown; until then that server still answers on the keep-alive
 * sockets this test's fetch pools, so a restarted server's `up()` could be answered by the old one, and the old
 * one's exit a moment later refused the test's next request.
 */
async function gone(server: ChildProcess): Promise<void> {
  for (let i = 0; i < 240; i++) {
    try {
      process.kill(-server.pid!, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the stopped server is still running');
}

async function call<T>(key: string | null, p: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${BASE}${p}`, {
    ...init,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

test('a killed server recovers its running job on restart', async () => {
  test.setTimeout(240_000);
  fs.rmSync(DIR, { recursive: true, force: true });
  let server = start();
  try {
    await up();
    await call(null, '/v1/auth/sign-up', {
      method: 'POST',
      body: JSON.stringify({ email: 'restart@example.test', password: 'restart-password', username: 'restart' }),
    });
    const { key } = await call<{ key: string }>(null, '/v1/auth/token', {
      method: 'POST',
      body: JSON.stringify({ email: 'restart@example.test', password: 'restart-password' }),
    });
    const model = await call<{ id: string }>(key, '/v1/preview/models', {
      method: 'POST',
      body: JSON.stringify({ project: 'p', name: 'm', base_model: 'tuneboard/tiny-random' }),
    });
    const res = await fetch(`${BASE}/v1/preview/datasets?project=p&name=long`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: LONG_SFT_DATASET,
    });
    const { training_data_url } = (await res.json()) as { training_data_url: string };
    const job = await call<{ id: string }>(key, '/v1/preview/sft-training-jobs', {
      method: 'POST',
      body: JSON.stringify({ model_id: model.id, training_data_url, config: { batch_size: 1 } }),
    });

    // Wait until it is visibly training (a few gradient steps), then kill everything at once.
    await expect
      .poll(
        async () =>
          (await call<{ completed_steps: number }>(key, `/v1/preview/training-jobs/${job.id}`)).completed_steps,
        {
          timeout: 120_000,
        },
      )
      .toBeGreaterThan(2);
    process.kill(-server.pid!, 'SIGKILL');
    await gone(server);

    server = start();
    await up();
    const after = await call<{ status: string; error_message: string | null }>(
      key,
      `/v1/preview/training-jobs/${job.id}`,
    );
    expect(after.status).toBe('FAILED');
    expect(after.error_message).toMatch(/worker stopped responding/);
    type Page = { data: { id: string; type: string }[]; has_more: boolean };
    const events = await call<Page>(key, `/v1/preview/training-jobs/${job.id}/events?limit=100`);
    let all = events.data;
    let cursor = all.at(-1);
    let more = events.has_more;
    while (more && cursor) {
      const page = await call<Page>(key, `/v1/preview/training-jobs/${job.id}/events?limit=100&after=${cursor.id}`);
      all = [...all, ...page.data];
      cursor = page.data.at(-1);
      more = page.has_more;
    }
    expect(all[0].type).toBe('training_started');
    expect(all.at(-1)?.type).toBe('training_failed');
    expect(all.filter((e) => e.type === 'training_failed')).toHaveLength(1);

    // The model is not stuck: a new job on it runs to the end.
    const small = Array.from({ length: 4 }, () =>
      JSON.stringify({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      }),
    ).join('\n');
    const upload = await fetch(`${BASE}/v1/preview/datasets?project=p&name=small`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: small,
    });
    const second = await call<{ id: string }>(key, '/v1/preview/sft-training-jobs', {
      method: 'POST',
      body: JSON.stringify({
        model_id: model.id,
        training_data_url: ((await upload.json()) as { training_data_url: string }).training_data_url,
      }),
    });
    await expect
      .poll(async () => (await call<{ status: string }>(key, `/v1/preview/training-jobs/${second.id}`)).status, {
        timeout: 120_000,
      })
      .toBe('COMPLETED');
  } finally {
    try {
      process.kill(-server.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

test('a server stopped with SIGTERM writes the usage it had not yet written', async () => {
  test.setTimeout(120_000);
  fs.rmSync(DIR, { recursive: true, force: true });
  let server = start();
  try {
    await up();
    // A fresh instance invites its first user to create an account rather than welcoming them back.
    expect(await (await fetch(`${BASE}/sign-in`)).text()).toContain('no account yet');
    await call(null, '/v1/auth/sign-up', {
      method: 'POST',
      body: JSON.stringify({ email: 'stop@example.test', password: 'restart-password', username: 'stopper' }),
    });
    expect(await (await fetch(`${BASE}/sign-in`)).text()).toContain('Welcome back');
    const { key } = await call<{ key: string }>(null, '/v1/auth/token', {
      method: 'POST',
      body: JSON.stringify({ email: 'stop@example.test', password: 'restart-password' }),
    });
    for (let i = 0; i < 3; i++) {
      await call(key, '/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({
          model: 'tuneboard/tiny-random',
          messages: [{ role: 'user', content: 'hi' }],
          max_tokens: 4,
        }),
      });
    }
    // At once, well inside the one-second batching interval: only the shutdown flush can have written these.
    const exited = new Promise((r) => server.once('exit', r));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
    await gone(server);

    server = start();
    await up();
    const usage = await call<{ data: { requests: number; completion_tokens: number }[] }>(key, '/v1/usage?days=1');
    expect(usage.data.map((r) => r.requests)).toEqual([3]);
  } finally {
    try {
      process.kill(-server.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

// SIGINT (Ctrl-C) goes through the same handler (lib/runtime/server-start.ts).
test('a server sent SIGTERM stops while a client polls it on a kept-alive connection, and its training worker stops', async () => {
  test.setTimeout(120_000);
  fs.rmSync(DIR, { recursive: true, force: true });
  // The server process itself (not npm above it), so that the signal reaches only the server, as a container's
  // stop does: the training worker it spawned must be stopped by the server.
  const server = spawn(
    process.execPath,
    [path.join(process.cwd(), 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '-p', String(PORT)],
    {
      env: { ...ENV, NODE_ENV: 'production' },
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  let socket: net.Socket | undefined;
  let workers: number[] = [];
  try {
    await up();
    // The built-in runner's worker child, polling this server for jobs.
    await expect.poll(() => childrenOf(server.pid!).length, { timeout: 30_000 }).toBeGreaterThan(0);
    workers = childrenOf(server.pid!);

    // A client with a request under way when the signal comes, which then keeps asking on the same connection
    // every 100 ms. Next stops listening and waits for open connections to close, and closes only the idle ones:
    // this one was never idle then, so unless answers close it, the server never exits.
    socket = net.connect(PORT, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket!.once('connect', resolve).once('error', reject));
    let answers = '';
    let closedByServer = false;
    socket.on('data', (chunk) => (answers += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('end', () => (closedByServer = true));
    socket.once('close', () => (closedByServer = true));
    socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(server.pid!, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write('\r\n');
    const deadline = Date.now() + 15_000;
    let stopped = false;
    void exited.then(() => (stopped = true));
    while (!stopped && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      if (!closedByServer) socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    }
    expect(stopped, 'the server exited within 15 s of the signal').toBe(true);
    // The request under way was answered, and that answer closed the connection.
    expect(answers).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answers.toLowerCase()).toContain('connection: close');
    expect(closedByServer).toBe(true);
    await expect.poll(() => workers.filter(alive), { timeout: 10_000 }).toEqual([]);
  } finally {
    socket?.destroy();
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    for (const pid of workers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});
