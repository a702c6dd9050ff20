import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installHealthFastPath, isHealthProbe } from '@/lib/api/health-fast-path';

describe('the health fast path', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let uninstall: () => void;
  beforeAll(async () => {
    uninstall = installHealthFastPath();
    installHealthFastPath(); // a second install (Next's dev server re-runs instrumentation) changes nothing
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
});
