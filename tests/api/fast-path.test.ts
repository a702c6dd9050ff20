import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import net from 'node:net';
import { readBodyText } from '@/lib/api/body';
import { methods, route } from '@/lib/api/route';
import {
  FAST_JSON_TEXT,
  FAST_REQUEST,
  PREREAD_BODY,
  clearFastRoutes,
  installFastPath,
  isHealthProbe,
  lingering,
  matchFastRoute,
  registerFastRoutes,
  type FastHandler,
} from '@/lib/api/fast-path';

/** A request through Node's client, which leaves the answer's bytes as sent (fetch would gunzip them). */
function rawRequest(url: string, method: string, headers: Record<string, string>) {
  return new Promise<http.IncomingMessage & { bytes: Buffer }>((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Object.assign(res, { bytes: Buffer.concat(chunks) })));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the fast path', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let uninstall: () => void;
  beforeAll(async () => {
    uninstall = installFastPath();
    installFastPath(); // a second install (Next's dev server re-runs instrumentation) changes nothing
    // Stands in for Next.js: whatever reaches the server's own handler is recorded and answered 418.
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    uninstall();
  });

  it("answers GET and HEAD /v1/health itself, with the route's body and headers", async () => {
    const res = await fetch(`${base}/v1/health`, { headers: { 'x-request-id': 'probe-1' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toBe('probe-1');
    // The security headers every other response gets from next.config.mjs.
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const head = await fetch(`${base}/v1/health/`, { method: 'HEAD', headers: { 'x-request-id': 'bad id!' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).toEqual([]);
  });

  it('hands every other request to the server, health with another method or a query included', async () => {
    for (const [method, path] of [
      ['POST', '/v1/health'],
      ['GET', '/v1/health?verbose=1'],
      ['GET', '/v1/healthz'],
      ['GET', '/v1/models'],
    ]) {
      expect((await fetch(`${base}${path}`, { method })).status).toBe(418);
    }
    expect(seen).toEqual(['POST /v1/health', 'GET /v1/health?verbose=1', 'GET /v1/healthz', 'GET /v1/models']);
    expect(isHealthProbe({ method: 'GET', url: '/v1/health' })).toBe(true);
    expect(isHealthProbe({ method: 'DELETE', url: '/v1/health' })).toBe(false);
  });

  describe('registered routes', () => {
    afterEach(() => {
      clearFastRoutes();
      vi.unstubAllEnvs();
    });
    const register = (handler: FastHandler) => {
      vi.stubEnv('NODE_ENV', 'production');
      registerFastRoutes('/v1/fast', { POST: handler });
    };

    it("run the route's handler with the request as sent, and stream its response with the security headers", async () => {
      let seenReq: { method: string; url: string; auth: string | null; body: string } | undefined;
      register(async (req) => {
        seenReq = { method: req.method, url: req.url, auth: req.headers.get('authorization'), body: await req.text() };
        const headers = new Headers({ 'content-type': 'text/event-stream', 'x-request-id': 'r-1' });
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        let n = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(c) {
            await new Promise((r) => setTimeout(r, 5));
            if (n === 3) return c.close();
            c.enqueue(new TextEncoder().encode(`data: ${n++}\n\n`));
          },
        });
        return new Response(body, { status: 201, headers });
      });
      const res = await fetch(`${base}/v1/fast/?x=1`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ hello: 'world' }),
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-request-id')).toBe('r-1');
      expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
      const pieces: string[] = [];
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) pieces.push(r.value);
      // Each chunk went out as the handler made it (a stream is not buffered to its end).
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
      expect(seenReq).toEqual({
        method: 'POST',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/fast\/\?x=1$/),
        auth: 'Bearer k',
        body: '{"hello":"world"}',
      });
      expect(seen).toEqual(expect.not.arrayContaining([expect.stringContaining('/v1/fast')]));
    });

    it("abort the handler's signal when the client goes away mid-answer", async () => {
      let signal: AbortSignal | undefined;
      register(async (req) => {
        signal = req.signal;
        return new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('data: 1\n\n')) }));
      });
      const client = new AbortController();
      const res = await fetch(`${base}/v1/fast`, { method: 'POST', body: '{}', signal: client.signal });
      await res.body!.getReader().read();
      client.abort();
      await vi.waitFor(() => expect(signal?.aborted).toBe(true));
    });

    it('give an aborted signal to a handler that first looks at it after the client went away', async () => {
      let late: AbortSignal | undefined;
      let clientGone!: () => void;
      const gone = new Promise<void>((r) => (clientGone = r));
      register(async (req) => {
        await gone;
        await new Promise((r) => setTimeout(r, 50));
        late = req.signal;
        return new Response(null, { status: 204 });
      });
      const client = new AbortController();
      const pending = fetch(`${base}/v1/fast`, { method: 'POST', body: '{}', signal: client.signal }).catch(() => null);
      await new Promise((r) => setTimeout(r, 50));
      client.abort();
      await pending;
      clientGone();
      await vi.waitFor(() => expect(late?.aborted).toBe(true));
    });

    /**
     * A client that reads the answer only after sending its whole body (as httpx and requests do), over a raw
     * socket: headers and a first piece, a pause while the server answers and would close, then the rest.
     */
    async function sendThenRead(opts: {
      bodyBytes: number;
      chunked?: boolean;
      pauseMs?: number;
      keepSending?: boolean;
    }) {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      const received: Buffer[] = [];
      let error: Error | undefined;
      socket.on('data', (b) => received.push(b));
      socket.on('error', (err) => (error = err));
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      const framing = opts.chunked ? 'transfer-encoding: chunked' : `content-length: ${opts.bodyBytes}`;
      const piece = Buffer.alloc(64 * 1024, 'x');
      const write = (b: Buffer | string) =>
        new Promise<void>((r) => (socket.destroyed ? r() : socket.write(b, () => r())));
      const frame = (b: Buffer) => (opts.chunked ? [`${b.length.toString(16)}\r\n`, b, '\r\n'] : [b]);
      await write(`POST /v1/fast HTTP/1.1\r\nhost: t\r\n${framing}\r\n\r\n`);
      for (const part of frame(piece)) await write(part);
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 200));
      let sent = piece.length;
      const started = Date.now();
      while (!socket.destroyed && (opts.keepSending ? Date.now() - started < 10_000 : sent < opts.bodyBytes)) {
        for (const part of frame(piece)) await write(part);
        sent += piece.length;
        if (opts.keepSending) await new Promise((r) => setTimeout(r, 20));
      }
      if (opts.chunked && !opts.keepSending) await write('0\r\n\r\n');
      const wroteAll = !error && !socket.destroyed;
      await closed;
      return {
        answer: Buffer.concat(received).toString('latin1'),
        error,
        wroteAll,
        seconds: (Date.now() - started) / 1000,
      };
    }

    it('answer a large body they did not read, and close only once the client has sent it (no reset)', async () => {
      let calls = 0;
      register(async () => {
        calls++;
        return Response.json({ error: 'no' }, { status: 401 });
      });
      for (const chunked of [false, true]) {
        const { answer, error, wroteAll } = await sendThenRead({ bodyBytes: 8 * 1024 * 1024, chunked });
        expect(error).toBeUndefined();
        expect(wroteAll).toBe(true);
        expect(answer).toMatch(/^HTTP\/1\.1 401 /);
        expect(answer.toLowerCase()).toContain('connection: close');
        expect(answer.endsWith('{"error":"no"}')).toBe(true);
      }
      expect(calls).toBe(2);
      // fetch sends its body whole and reads the answer too.
      const res = await fetch(`${base}/v1/fast`, { method: 'POST', body: 'x'.repeat(4 * 1024 * 1024) });
      expect(res.status).toBe(401);
      expect(res.headers.get('connection')).toBe('close');
    });

    it('stop taking a refused body from a client that sends without end, or goes quiet', async () => {
      register(async () => Response.json({ error: 'no' }, { status: 413 }));
      const saved = { ...lingering };
      Object.assign(lingering, { idleMs: 300, totalMs: 1_000 });
      try {
        const endless = await sendThenRead({ bodyBytes: 0, chunked: true, keepSending: true });
        expect(endless.answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(endless.seconds).toBeLessThan(5);
        // Headers and a first piece of a long body, then nothing: closed after the idle time.
        const quiet = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
        quiet.on('error', () => undefined);
        const t0 = Date.now();
        quiet.write(`POST /v1/fast HTTP/1.1\r\nhost: t\r\ncontent-length: ${1 << 30}\r\n\r\n${'x'.repeat(1000)}`);
        let answer = '';
        quiet.on('data', (b: Buffer) => (answer += b.toString('latin1')));
        await new Promise((r) => quiet.once('close', r));
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(Date.now() - t0).toBeLessThan(3_000);
      } finally {
        Object.assign(lingering, saved);
      }
    });

    it('read a small body that declares its length before the handler, and stream any other body', async () => {
      const got: { preread: boolean; text: string }[] = [];
      register(async (req) => {
        const preread = PREREAD_BODY in req;
        got.push({ preread, text: await readBodyText(req, 1024 * 1024) });
        return Response.json({ ok: true });
      });
      const small = JSON.stringify({ messages: [{ role: 'user', content: 'héllo \ufeff' }] });
      expect((await fetch(`${base}/v1/fast`, { method: 'POST', body: small })).status).toBe(200);
      // Chunked (no Content-Length): streamed to the handler as before.
      const chunked = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"a":'));
          c.enqueue(new TextEncoder().encode('1}'));
          c.close();
        },
      });
      const init = { method: 'POST', body: chunked, duplex: 'half' } as RequestInit;
      expect((await fetch(`${base}/v1/fast`, init)).status).toBe(200);
      // Past 64 KiB: streamed too.
      const large = 'x'.repeat(100 * 1024);
      expect((await fetch(`${base}/v1/fast`, { method: 'POST', body: large })).status).toBe(200);
      expect(got).toEqual([
        { preread: true, text: small },
        { preread: false, text: '{"a":1}' },
        { preread: false, text: large },
      ]);
    });

    it('run the handler before the body arrives, and give it a failed read when the client hangs up midway', async () => {
      // The handler runs at once (it authenticates before it asks for the body); the body is read when it asks.
      const read = vi.fn();
      register(async (req) => {
        await readBodyText(req, 1024 * 1024).then(
          (text) => read('read', text),
          (err: Error) => read('failed', err.message),
        );
        return Response.json({});
      });
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write('POST /v1/fast HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"only":');
      await new Promise((r) => setTimeout(r, 50));
      socket.destroy();
      await vi.waitFor(() =>
        expect(read).toHaveBeenCalledWith(
          'failed',
          'The request body could not be read: the client closed the connection',
        ),
      );
      // The server goes on answering.
      expect((await fetch(`${base}/v1/health`)).status).toBe(200);
    });

    it('leave other methods and paths to the server', async () => {
      register(async () => new Response('fast'));
      seen.length = 0;
      expect((await fetch(`${base}/v1/fast`, { method: 'PUT' })).status).toBe(418);
      expect((await fetch(`${base}/v1/fastx`, { method: 'POST' })).status).toBe(418);
      expect(seen).toEqual(['PUT /v1/fast', 'POST /v1/fastx']);
    });

    it('register nothing outside a production server (next dev recompiles edited routes itself)', async () => {
      // Fresh modules: the configuration caches a production environment once it has seen one.
      vi.resetModules();
      vi.stubEnv('NODE_ENV', 'development');
      const fresh = await import('@/lib/api/fast-path');
      fresh.registerFastRoutes('/v1/elsewhere', { POST: async () => new Response('fast') });
      expect(fresh.matchFastRoute('POST', '/v1/elsewhere')).toBeUndefined();
      vi.stubEnv('TUNEBOARD_FAST_ROUTES', '0');
      vi.stubEnv('NODE_ENV', 'production');
      vi.resetModules();
      const off = await import('@/lib/api/fast-path');
      off.registerFastRoutes('/v1/elsewhere', { POST: async () => new Response('fast') });
      expect(off.matchFastRoute('POST', '/v1/elsewhere')).toBeUndefined();
    });

    it('match path parameters, plain static segments first, with or without a trailing slash', () => {
      vi.stubEnv('NODE_ENV', 'production');
      const byId: FastHandler = async () => new Response('id');
      const list: FastHandler = async () => new Response('list');
      const events: FastHandler = async () => new Response('events');
      registerFastRoutes('/v1/jobs/[job_id]', { GET: byId });
      registerFastRoutes('/v1/jobs/latest', { GET: list });
      registerFastRoutes('/v1/jobs/[job_id]/events/[seq]', { GET: events });
      expect(matchFastRoute('GET', '/v1/jobs/abc-1')).toEqual({ handler: byId, params: { job_id: 'abc-1' } });
      expect(matchFastRoute('GET', '/v1/jobs/latest/?x=1')).toEqual({ handler: list, params: {} });
      expect(matchFastRoute('GET', '/v1/jobs/j/events/42?limit=1')).toEqual({
        handler: events,
        params: { job_id: 'j', seq: '42' },
      });
      // Left to Next: another method, unknown paths, and URLs Next normalises (dots, empty or encoded segments).
      for (const [method, url] of [
        ['HEAD', '/v1/jobs/abc'],
        ['GET', '/v1/jobs'],
        ['GET', '/v1/jobs/a/b'],
        ['GET', '/v1/jobs/..'],
        ['GET', '/v1//jobs/abc'],
        ['GET', '/v1/jobs/a%2Fb'],
        ['GET', '/v2/jobs/abc'],
      ])
        expect(matchFastRoute(method, url), `${method} ${url}`).toBeUndefined();
    });

    it('gzip a JSON answer of 1 KiB or more when the client takes gzip, as Next did', async () => {
      const big = { items: Array.from({ length: 200 }, (_, i) => ({ i, name: `item ${i}` })) };
      vi.stubEnv('NODE_ENV', 'production');
      registerFastRoutes('/v1/fast', {
        GET: async (req) => Response.json(new URL(req.url).searchParams.has('small') ? { ok: true } : big),
        POST: async () =>
          new Response('plain text, not worth compressing'.repeat(100), {
            headers: { 'content-type': 'text/plain', 'cache-control': 'no-transform' },
          }),
      });
      const raw = (path: string, acceptEncoding: string, method = 'GET') =>
        rawRequest(`${base}${path}`, method, { 'accept-encoding': acceptEncoding });
      const zipped = await raw('/v1/fast', 'gzip, deflate, br');
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers.vary).toBe('Accept-Encoding');
      expect(Number(zipped.headers['content-length'])).toBe(zipped.bytes.length);
      expect(JSON.parse(zlib.gunzipSync(zipped.bytes).toString())).toEqual(big);
      for (const [path, accept, method] of [
        ['/v1/fast', 'identity', 'GET'],
        ['/v1/fast', 'gzip;q=0', 'GET'],
        ['/v1/fast?small', 'gzip', 'GET'],
        ['/v1/fast', 'gzip', 'POST'],
      ]) {
        const res = await raw(path, accept, method);
        expect(res.headers['content-encoding'], `${method} ${path} ${accept}`).toBeUndefined();
        // JSON is sent whole, with its length; other bodies stream.
        if (method === 'GET') expect(Number(res.headers['content-length'])).toBe(res.bytes.length);
        expect(res.bytes.length).toBeGreaterThan(0);
      }
    });

    it("write a route's JSON answer as its text, whole and the same as a handler called directly gives", async () => {
      vi.stubEnv('NODE_ENV', 'production');
      const big = { items: Array.from({ length: 200 }, (_, i) => ({ i, name: `item ${i}`, note: 'é ✓' })) };
      const routes = methods('/v1/fast-json', {
        GET: route({ summary: 'test', tag: 'test', auth: 'public' }, async ({ req }) =>
          new URL(req.url).searchParams.has('small') ? { ok: 'é' } : big,
        ),
        POST: route({ summary: 'test', tag: 'test', auth: 'public', status: 201 }, async () => ({ made: true })),
      });
      const raw = (path: string, method = 'GET', acceptEncoding = 'identity') =>
        rawRequest(`${base}${path}`, method, { 'accept-encoding': acceptEncoding, 'x-request-id': 'json-1' });
      const small = await raw('/v1/fast-json?small');
      expect(small.statusCode).toBe(200);
      expect(small.bytes.toString()).toBe('{"ok":"é"}');
      // The length in bytes, not characters.
      expect(small.headers['content-length']).toBe(String(Buffer.byteLength('{"ok":"é"}')));
      expect(small.headers['content-type']).toBe('application/json');
      expect(small.headers['cache-control']).toBe('no-store');
      expect(small.headers['x-request-id']).toBe('json-1');
      expect(small.headers['x-frame-options']).toBe('DENY');
      const created = await raw('/v1/fast-json', 'POST');
      expect(created.statusCode).toBe(201);
      expect(JSON.parse(created.bytes.toString())).toEqual({ made: true });
      const zipped = await raw('/v1/fast-json', 'GET', 'gzip');
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(Number(zipped.headers['content-length'])).toBe(zipped.bytes.length);
      expect(JSON.parse(zlib.gunzipSync(zipped.bytes).toString())).toEqual(big);
      expect(seen).toEqual(expect.not.arrayContaining([expect.stringContaining('/v1/fast-json')]));
      // Called directly (as Next would in `next dev`, or a test), the handler's Response carries the body itself.
      const direct = await routes.GET(new Request('http://x/v1/fast-json'), { params: Promise.resolve({}) });
      expect(await direct.json()).toEqual(big);
      expect(direct.headers.get('content-type')).toBe('application/json');
      // Made by the fast path, the Request gets no body stream: the text is handed over beside the Response.
      const fastReq = Object.assign(new Request('http://x/v1/fast-json?small'), { [FAST_REQUEST]: true });
      const fast = await routes.GET(fastReq, { params: Promise.resolve({}) });
      expect(fast.body).toBeNull();
      expect((fast as unknown as Record<symbol, string>)[FAST_JSON_TEXT]).toBe('{"ok":"é"}');
    });
  });
});
