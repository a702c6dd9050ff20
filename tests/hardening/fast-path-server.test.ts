import { execFileSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createUser, type TestUser } from '../support/helpers';

/**
 * Issue 42's fast-path items, against the fast path as a production server runs it: installed on Node's server
 * (lib/api/fast-path.ts), serving the real route files' handlers with the real database, in front of a stand-in for
 * Next.js that records what reaches it. Raw sockets where the framing matters (chunked bodies, bodies that never
 * end, request lines no client library sends).
 *
 * The settings are fixed before anything reads them: a production configuration is read once (lib/config).
 */
const ADDRESS_ATTEMPTS = 3;
const SMALL_BODY_MB = 0.25;
const BODY_TIMEOUT_SECONDS = 1;

let server: http.Server;
let port: number;
let base: string;
let uninstall: () => void;
let user: TestUser;
/** What reached the stand-in for Next.js: `METHOD url x-forwarded-for`. */
const seenByNext: string[] = [];

beforeAll(async () => {
  process.env.TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS = String(ADDRESS_ATTEMPTS);
  process.env.TUNEBOARD_MAX_SMALL_BODY_MB = String(SMALL_BODY_MB);
  process.env.TUNEBOARD_BODY_TIMEOUT_SECONDS = String(BODY_TIMEOUT_SECONDS);
  // Users are made before the configuration turns production (createUser calls the handlers directly).
  user = await createUser();
  (process.env as Record<string, string>).NODE_ENV = 'production';
  const { installFastPath, registerFastRoutes } = await import('@/lib/api/fast-path');
  uninstall = installFastPath();
  // A route file registers itself when it is loaded (in a server, by Next), but tests/support/helpers.ts loaded these
  // before the configuration was a production one, which registers nothing: they are registered here.
  const token = await import('@/app/v1/auth/token/route');
  const models = await import('@/app/v1/preview/models/route');
  registerFastRoutes('/v1/auth/token', { POST: token.POST });
  registerFastRoutes('/v1/preview/models', { GET: models.GET, POST: models.POST });
  const { methods, route } = await import('@/lib/api/route');
  const { withUploadedFiles } = await import('@/lib/api/uploads');
  methods('/v1/test-echo', {
    POST: route({ summary: 'test', tag: 'test', body: z.object({}).passthrough() }, async ({ body }) => body),
  });
  // A streamed upload, as the workers' checkpoint route reads one.
  methods('/v1/test-upload', {
    POST: route({ summary: 'test', tag: 'test' }, async ({ req }) => {
      const limits = { limitBytes: 1 << 30, limitSetting: 'TEST', largeAdmission: false };
      return withUploadedFiles(req, 'raw', limits, async (files) => {
        let size = 0;
        for await (const file of files) for await (const chunk of file.stream) size += chunk.length;
        return { size };
      });
    }),
  });
  server = http.createServer((req, res) => {
    seenByNext.push(`${req.method} ${req.url} ${req.headers['x-forwarded-for'] ?? '-'}`);
    res.writeHead(418).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  uninstall();
});

/** Writes `head` (and `body`) on a fresh connection and collects what comes back until the server closes it. */
function rawExchange(
  head: string,
  opts: { body?: Buffer | string; giveUpMs?: number } = {},
): Promise<{ answer: string; error?: string; ms: number; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let answer = '';
    let error: string | undefined;
    socket.on('data', (b: Buffer) => (answer += b.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ answer, error, ms: Date.now() - started, closed: false });
    }, opts.giveUpMs ?? 10_000);
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ answer, error, ms: Date.now() - started, closed: true });
    });
    socket.write(head);
    if (opts.body !== undefined) socket.write(opts.body);
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

describe('the fast path of a production server (issue 42)', () => {
  it('applies the per-address sign-in limit to the socket address, whatever X-Forwarded-For says', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < ADDRESS_ATTEMPTS + 3; i++) {
      const res = await fetch(`${base}/v1/auth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          // A client behind no proxy can write anything here; with no proxy trusted it must change nothing.
          'x-forwarded-for': `198.51.100.${i + 1}`,
        },
        body: JSON.stringify({ email: `nobody-${i}-${Date.now()}@example.test`, password: 'wrong', key_name: 'k' }),
      });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(statuses).toEqual([...Array<number>(ADDRESS_ATTEMPTS).fill(401), ...Array<number>(3).fill(429)]);
    // A request Next.js serves gets the same address in X-Forwarded-For, where its handlers read it.
    seenByNext.length = 0;
    await fetch(`${base}/v1/elsewhere`, { headers: { 'x-forwarded-for': '198.51.100.77' } });
    expect(seenByNext).toEqual(['GET /v1/elsewhere 127.0.0.1']);
  }, 60_000);

  it('answers a chunked body past the limit with 413 and its JSON, not a reset', async () => {
    const piece = Buffer.alloc(64 * 1024, 'x');
    const chunks: Buffer[] = [];
    // 2 MiB, eight times the limit, sent whole before the answer is read (as httpx and requests do).
    for (let i = 0; i < 32; i++)
      chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    chunks.push(Buffer.from('0\r\n\r\n'));
    for (let round = 0; round < 3; round++) {
      const { answer, error, closed } = await rawExchange(
        `POST /v1/preview/models HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${user.key}\r\n` +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
        { body: Buffer.concat(chunks) },
      );
      expect(error, `round ${round}`).toBeUndefined();
      expect(closed).toBe(true);
      expect(statusOf(answer), answer.slice(0, 200)).toBe(413);
      expect(answer.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(bodyOf(answer))).toEqual({ detail: 'Request body too large' });
    }
  }, 60_000);

  it('authenticates before it waits for a body: unauthenticated bodies that never end get 401 at once', async () => {
    const n = 50;
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        rawExchange(
          'POST /v1/test-echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n',
          { body: 'x'.repeat(65535), giveUpMs: 8_000 },
        ),
      ),
    );
    const statuses = answers.map((a) => statusOf(a.answer) || a.error || 'no answer');
    expect(statuses).toEqual(Array(n).fill(401));
    // Answered before the body could time out (1 s here), so nothing waited for it.
    for (const a of answers) expect(JSON.parse(bodyOf(a.answer))).toEqual({ detail: 'Not authenticated' });
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 30_000);

  it('answers 408 and closes when an authenticated body stops arriving', async () => {
    for (const framing of ['Content-Length: 100', 'Transfer-Encoding: chunked']) {
      const partial = framing.startsWith('Content') ? '{"name":' : '8\r\n{"name":\r\n';
      const { answer, ms, closed } = await rawExchange(
        `POST /v1/test-echo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${user.key}\r\n` +
          `Content-Type: application/json\r\n${framing}\r\n\r\n`,
        { body: partial, giveUpMs: 10_000 },
      );
      expect(closed, framing).toBe(true);
      expect(statusOf(answer), `${framing}: ${answer.slice(0, 200)}`).toBe(408);
      expect(JSON.parse(bodyOf(answer))).toEqual({
        detail: `The request body did not arrive within ${BODY_TIMEOUT_SECONDS} s`,
      });
      expect(ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1000 - 50);
      expect(ms).toBeLessThan(BODY_TIMEOUT_SECONDS * 1000 + 3_000);
    }
    // A streamed upload (past 64 KiB) that stalls midway.
    const upload = await rawExchange(
      `POST /v1/test-upload HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${user.key}\r\nContent-Length: 200000\r\n\r\n`,
      { body: Buffer.alloc(100_000, 'u'), giveUpMs: 10_000 },
    );
    expect(statusOf(upload.answer), upload.answer.slice(0, 200)).toBe(408);
    expect(upload.closed).toBe(true);
    // A body that arrives in time is served as before.
    const ok = await fetch(`${base}/v1/test-echo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}` },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ hello: 'world' });
    const uploaded = await fetch(`${base}/v1/test-upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}` },
      body: Buffer.alloc(200_000, 'u'),
    });
    expect(await uploaded.json()).toEqual({ size: 200_000 });
  }, 30_000);

  it('refuses TRACE, unknown methods and request targets that are not a path with JSON, before Next.js', async () => {
    seenByNext.length = 0;
    for (const [line, status] of [
      ['TRACE /v1/health HTTP/1.1', 405],
      ['TRACE /v1/preview/models HTTP/1.1', 405],
      ['PROPFIND /v1/models HTTP/1.1', 405],
      ['OPTIONS * HTTP/1.1', 400],
      ['GET * HTTP/1.1', 400],
      ['GET http://elsewhere.example/v1/health HTTP/1.1', 400],
    ] as const) {
      const { answer } = await rawExchange(`${line}\r\nHost: t\r\nConnection: close\r\n\r\n`);
      expect(statusOf(answer), line).toBe(status);
      const head = answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase();
      expect(head, line).toContain('content-type: application/json');
      expect(head, line).toContain('x-content-type-options: nosniff');
      const { detail } = JSON.parse(bodyOf(answer)) as { detail: string };
      expect(detail, line).toMatch(status === 405 ? /^Method Not Allowed/ : /^Bad Request/);
      if (status === 405) expect(head).toContain('allow: get, head, post, put, patch, delete, options');
    }
    expect(seenByNext).toEqual([]);
  });

  it("answers what Node's parser refuses (an unknown method token, headers too large) with JSON too", async () => {
    const track = await rawExchange('TRACK /v1/health HTTP/1.1\r\nHost: t\r\n\r\n');
    expect(statusOf(track.answer)).toBe(400);
    expect(JSON.parse(bodyOf(track.answer))).toEqual({
      detail: 'Bad Request: the request could not be parsed (Invalid method encountered)',
    });
    const huge = await rawExchange(`GET /v1/health HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(statusOf(huge.answer)).toBe(431);
    expect(JSON.parse(bodyOf(huge.answer))).toEqual({ detail: 'Request Header Fields Too Large' });
  });
});

describe("a production server's stdout", () => {
  it('carries what is printed with console.* (Next.js reports its errors so) as one JSON object per line', () => {
    // In a process of its own: the logger writes to file descriptor 1, and the console of this one is Vitest's.
    const script = `
      const logger = await import('./lib/logger/index.ts');
      (logger.default ?? logger).routeConsoleToLogger();
      console.error('⨯', new TypeError("'TRACE' HTTP method is unsupported."));
      console.error(new Error('Invalid URL'));
      console.warn('careful: %d', 3);
      console.log({ a: 1 });
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = out.trimEnd().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.map((l) => [l.level, l.component, l.msg])).toEqual([
      [50, 'next', '⨯'],
      [50, 'next', 'Invalid URL'],
      [40, 'next', 'careful: 3'],
      [30, 'next', '{ a: 1 }'],
    ]);
    // The stack is inside the line, not printed after it.
    expect((parsed[0].err as { stack: string }).stack).toMatch(
      /^TypeError: 'TRACE' HTTP method is unsupported\.\n\s+at /,
    );
  }, 30_000);
});
