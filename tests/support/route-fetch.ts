import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { routeManifest } from '@/app/v1/route-manifest';
import { addFastRoutes, serveFast } from '@/lib/api/fast-path';

/**
 * A `fetch` that dispatches to the route modules in-process, matching paths against the manifest's
 * templates: HTTP clients (the worker protocol, SDKs) can be tested without starting a server.
 */
export const routeFetch: typeof fetch = async (input, init) => {
  const req = new Request(input instanceof Request ? input : new URL(String(input), 'http://localhost:3000'), init);
  const { pathname } = new URL(req.url);
  for (const entry of routeManifest) {
    const names: string[] = [];
    const pattern = new RegExp(
      '^' + entry.path.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), '([^/]+)')) + '/?$',
    );
    const match = pattern.exec(pathname);
    if (!match) continue;
    const handler = entry.module[req.method as 'GET'];
    if (!handler) return new Response(JSON.stringify({ detail: 'Method Not Allowed' }), { status: 405 });
    const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1])]));
    return handler(req, { params: Promise.resolve(params) });
  }
  return new Response(JSON.stringify({ detail: 'Not Found' }), {
    status: 404,
    headers: { 'content-type': 'application/json' },
  });
};

let fastServer: Promise<string> | undefined;

/**
 * A loopback HTTP server that serves every route file through lib/api/fast-path.ts's dispatch (`serveFast`), as a
 * production server does ahead of Next: Node's request made into the fast path's Request (bodies read when the handler
 * asks, small ones whole, larger ones streamed), and the answer written back by it (JSON text, gzip, streams). What
 * the fast path leaves to Next gets the JSON 404 of app/v1/[...path]. Started once per test process, and unref'd.
 */
function fastPathServer(): Promise<string> {
  return (fastServer ??= (async () => {
    // Registered here: outside a production server methods() leaves the registry empty (registerFastRoutes).
    for (const entry of routeManifest) {
      const path = Object.values(entry.module).find((h) => h?.routePath)?.routePath;
      if (path) addFastRoutes(path, entry.module);
    }
    const server = http.createServer((req, res) => {
      if (serveFast(req, res)) return;
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not Found' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.unref();
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  })());
}

/**
 * routeFetch's twin through the fast path: the same route handlers, reached over a real socket the way a production
 * server reaches them (docs/architecture.md §4 step 0). The route tests whose handlers read bodies or stream answers
 * use it (docs/testing.md), so the fast path's Request and its writing of the Response are tested with them and not
 * only by its own tests and the production build.
 */
export const fastPathFetch: typeof fetch = async (input, init) => {
  const base = await fastPathServer();
  const url = new URL(input instanceof Request ? input.url : String(input), 'http://localhost:3000');
  const target = `${base}${url.pathname}${url.search}`;
  if (!(input instanceof Request)) return fetch(target, init);
  // A Request's body is a stream, which fetch would send chunked: sent as bytes, it keeps its Content-Length.
  const body = input.body ? new Uint8Array(await input.arrayBuffer()) : undefined;
  return fetch(target, { method: input.method, headers: input.headers, body, signal: input.signal, ...init });
};
