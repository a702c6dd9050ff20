import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, test } from '@playwright/test';

/**
 * Issue 42's fast-path items against the production build as `npm start` runs it, with fast routes on (the default)
 * and off: the per-address sign-in limit applies to the socket's address whatever X-Forwarded-For says, TRACE and
 * request targets that are not a path get JSON 405/400 before Next.js, and every line the server writes to stdout
 * after its start-up banner is one JSON object (Next printed TRACE's 500 as plain-text stack lines).
 * tests/hardening/fast-path-server.test.ts covers the same and the body items in Vitest, in process.
 */
test.describe.configure({ mode: 'serial' });
const ATTEMPTS = 3;

function start(port: number, fastRoutes: boolean): { server: ChildProcess; stdout: () => string } {
  const dir = path.join(process.cwd(), '.data', `e2e-fast-path-${port}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const server = spawn('npm', ['run', 'start'], {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: '',
      TUNEBOARD_DATA_DIR: 'memory://',
      TUNEBOARD_ARTIFACT_DIR: path.join(dir, 'artifacts'),
      TUNEBOARD_RUNNER_CONCURRENCY: '0',
      TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS: String(ATTEMPTS),
      TUNEBOARD_FAST_ROUTES: fastRoutes ? '1' : '0',
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  server.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  server.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  return { server, stdout: () => out };
}

async function up(base: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${base}/v1/system-check`)).status < 500) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not start');
}

function raw(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (b: Buffer) => (answer += b.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(head);
  });
}

// E2E_FAST_PATH_PORT: another pair of ports, for a run beside another checkout's.
const PORT = Number(process.env.E2E_FAST_PATH_PORT ?? 3171);
for (const [fastRoutes, port] of [
  [true, PORT],
  [false, PORT + 1],
] as const) {
  test(`fast routes ${fastRoutes ? 'on' : 'off'}: address limit, odd requests, JSON log lines`, async () => {
    test.setTimeout(180_000);
    const base = `http://127.0.0.1:${port}`;
    const { server, stdout } = start(port, fastRoutes);
    try {
      await up(base);
      const statuses: number[] = [];
      for (let i = 0; i < ATTEMPTS + 2; i++) {
        const res = await fetch(`${base}/v1/auth/token`, {
          method: 'POST',
          // A forged X-Forwarded-For per attempt: with no proxy trusted (the default) it must change nothing.
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i + 1}` },
          body: JSON.stringify({ email: `spray-${i}@example.test`, password: 'wrong', key_name: 'k' }),
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([...Array<number>(ATTEMPTS).fill(401), 429, 429]);

      for (const [line, status] of [
        ['TRACE /v1/health HTTP/1.1', 405],
        ['TRACE /v1/preview/models HTTP/1.1', 405],
        ['OPTIONS * HTTP/1.1', 400],
        ['GET * HTTP/1.1', 400],
      ] as const) {
        const answer = await raw(port, `${line}\r\nHost: t\r\nConnection: close\r\n\r\n`);
        expect(answer.split('\r\n')[0], line).toBe(
          `HTTP/1.1 ${status} ${status === 405 ? 'Method Not Allowed' : 'Bad Request'}`,
        );
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toHaveProperty('detail');
      }

      // Past Next's banner (printed before the server's own code runs), every line is a JSON object.
      const lines = stdout().split('\n').filter(Boolean);
      const first = lines.findIndex((l) => l.startsWith('{'));
      expect(first).toBeGreaterThanOrEqual(0);
      for (const line of lines.slice(first)) expect(() => JSON.parse(line), line).not.toThrow();
    } finally {
      try {
        process.kill(-server.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
}
