import 'server-only';
import http from 'node:http';
import securityHeaders from '@/config/security-headers.json';
import { requestIdFrom } from './request-id';

/**
 * `GET /v1/health` answered as soon as Node has parsed the request, before Next.js routes it.
 *
 * Health is a liveness probe: it must say "this process is alive and its event loop turns" quickly, whatever
 * else the server is doing. Through Next.js it waits its turn behind every request in flight: each one's
 * routing, handler and response streaming is a chain of promise hops that interleaves with the others, and with
 * 250 requests in flight a probe took over 100 ms at p99 on a 2-core machine (bench:gateway), where a 1 s probe
 * timeout is common. Answered here, it costs one event-loop turn. Only the exact GET (or HEAD) of the route is
 * taken; its body and headers are the route's (`app/v1/health/route.ts`, which still serves every other method
 * and documents the route in the OpenAPI document).
 */

const BODY = Buffer.from('{"status":"ok"}');
const PATHS = new Set(['/v1/health', '/v1/health/']);
const installed = Symbol.for('tuneboard.healthFastPath');

function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
  const given = req.headers['x-request-id'];
  const requestId = requestIdFrom(typeof given === 'string' ? given : undefined);
  res.writeHead(200, {
    // What next.config.mjs adds to every other response.
    ...securityHeaders,
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': BODY.length,
    'x-request-id': requestId,
  });
  res.end(req.method === 'HEAD' ? undefined : BODY);
}

/** True when the request is the liveness probe this path answers. */
export function isHealthProbe(req: Pick<http.IncomingMessage, 'method' | 'url'>): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && PATHS.has(req.url ?? '');
}

/**
 * Installs the fast path on every HTTP server of this process (Next.js creates its own; this runs from
 * instrumentation.ts). Idempotent: Next's dev server may evaluate instrumentation more than once. Returns the
 * uninstall (a no-op from a repeated install).
 */
export function installHealthFastPath(): () => void {
  const proto = http.Server.prototype as http.Server & { [installed]?: boolean };
  if (proto[installed]) return () => undefined;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'request') {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      if (isHealthProbe(req)) {
        answer(req, res);
        return true;
      }
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof proto.emit;
  // For tests, which share the process with others.
  return () => {
    proto.emit = emit;
    delete proto[installed];
  };
}
