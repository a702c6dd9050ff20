import { routeManifest } from '@/app/v1/route-manifest';

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
