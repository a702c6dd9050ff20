import 'server-only';
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import securityHeaders from '@/config/security-headers.json';
import { config } from '@/lib/config';
import { nodeWriterOf } from '@/lib/inference/node-writer';
import { componentLogger } from '@/lib/logger';
import { inTurnAsync } from '@/lib/runtime/turns';
import { ClientSignal, PrereadRequest } from './preread-request';
import { requestIdFrom } from './request-id';

/**
 * Requests answered as soon as Node has parsed them, before Next.js routes them: the liveness probe, and every
 * /v1 API route.
 *
 * Next's app router spends about 1 ms of the request thread on every request before a handler runs (routing,
 * its request and response wrappers, compression, a chain of promise hops per request), which capped any API
 * route at about 1,100 requests/s on a 2-core machine however little the handler did, and made a relayed chat
 * completion cost several times what the engine behind it spent (bench:api, bench:gateway). Under load those
 * hops interleave with every other request in flight, so a health probe waited over 100 ms at p99 where a 1 s
 * probe timeout is common. Next keeps serving the pages.
 *
 * - **Health** costs one event-loop turn here. Only the exact GET (or HEAD) of the route is taken; its body and
 *   headers are the route's (`app/v1/health/route.ts`).
 * - **API routes** run the route file's own handlers (the same functions Next would call, from the same loaded
 *   module, so one copy of every cache and engine): each route file names its path in `methods()`
 *   (lib/api/route.ts), which registers it here when Next loads the module (at start-up, or on the first
 *   request to it). A handler gets a web Request made from Node's; its Response is written back with the
 *   security headers next.config.mjs adds to every other response, gzipped as Next would. The /v1 API has no
 *   middleware (proxy.ts matches pages only) and its handlers use no Next request APIs (`headers()`,
 *   `cookies()`, `after()`), so nothing Next would add is skipped. HEAD, OPTIONS, unknown paths and unusual
 *   URLs (empty, dot or percent-encoded segments) still go to Next.
 * - Only a production server registers routes: in `next dev` a route edited on disk must be recompiled by Next,
 *   which a registered handler would bypass. `TUNEBOARD_FAST_ROUTES=0` turns registration off.
 */

const log = componentLogger('api');
/** Where toRequest leaves a body it read whole (a global symbol: lib/api/body.ts is bundled apart). */
export const PREREAD_BODY = Symbol.for('tuneboard.prereadBody');
/** Marks the Requests this path makes (lib/api/respond.ts's jsonAnswer). */
export const FAST_REQUEST = Symbol.for('tuneboard.fastRequest');
/** The JSON text of an answer whose Response carries no body (jsonAnswer): written here as it is. */
export const FAST_JSON_TEXT = Symbol.for('tuneboard.fastJsonText');
const BODY = Buffer.from('{"status":"ok"}');
const PATHS = new Set(['/v1/health', '/v1/health/']);
const installed = Symbol.for('tuneboard.fastPath');
const draining = Symbol.for('tuneboard.draining');

/**
 * From a stop signal on, every answer closes its connection (`Connection: close`). Next's shutdown stops listening
 * and then waits for every open connection to close, but closes only those idle at that moment: a client that polls on
 * a kept-alive connection more often than the keep-alive timeout (5 s), as a load balancer's checks or a training
 * client polling its job do, kept a stopping server running for good.
 */
export function beginDraining(): void {
  (globalThis as Record<symbol, unknown>)[draining] = true;
}

/** A route file's handler for one method (lib/api/route.ts's RouteHandler). */
export type FastHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
export type FastMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface FastRoute {
  pattern: string;
  /** Path segments; null where a `[name]` segment captures a parameter. */
  segments: (string | null)[];
  names: string[];
  handlers: Partial<Record<FastMethod, FastHandler>>;
}

// On globalThis: instrumentation and the route files are bundled apart and would each get their own module state.
const registry = ((globalThis as Record<symbol, unknown>)[Symbol.for('tuneboard.fastRoutes')] ??= {
  byPattern: new Map<string, FastRoute>(),
  // By segment count; static segments before parameters at the first place two patterns differ, as Next ranks.
  byLength: new Map<number, FastRoute[]>(),
}) as { byPattern: Map<string, FastRoute>; byLength: Map<number, FastRoute[]> };

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
 * Serves a route file's handlers on its path (Next's syntax: `/v1/preview/models/[model_id]`) from now on,
 * ahead of Next.js. A no-op outside a production server (see the module comment).
 */
export function registerFastRoutes(pattern: string, handlers: Partial<Record<FastMethod, FastHandler>>): void {
  if (!config.isProduction || !config.fastRoutes) return;
  const parts = pattern.split('/').slice(1);
  const route: FastRoute = {
    pattern,
    segments: parts.map((p) => (/^\[[^.\]]+\]$/.test(p) ? null : p)),
    names: parts.filter((p) => p.startsWith('[')).map((p) => p.slice(1, -1)),
    handlers,
  };
  if (parts.some((p) => p.startsWith('[...') || p.startsWith('[[')))
    throw new Error(`fast path: catch-all segments are left to Next (${pattern})`);
  registry.byPattern.set(pattern, route);
  const sameLength = [...registry.byPattern.values()].filter((r) => r.segments.length === route.segments.length);
  const rank = (r: FastRoute) => r.segments.map((s) => (s === null ? '1' : '0')).join('');
  registry.byLength.set(
    route.segments.length,
    sameLength.sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0)),
  );
}

// Plain segments only: anything else (empty, `.`/`..`, percent-encoded) is left to Next's own normalisation.
// /api/v1: the Tinker SDK's routes (docs/tinker.md §2.1), served like the rest of the API.
const PLAIN_PATH = /^(?:\/api)?\/v1(?:\/[A-Za-z0-9_~:@!$&'()*+,;=-][A-Za-z0-9._~:@!$&'()*+,;=-]*)+\/?$/;

/** The handler and path parameters for a request, or undefined when Next should have it. */
export function matchFastRoute(
  method: string | undefined,
  url: string,
): { handler: FastHandler; params: Record<string, string> } | undefined {
  if (registry.byPattern.size === 0) return undefined;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!PLAIN_PATH.test(path)) return undefined;
  const parts = (path.endsWith('/') ? path.slice(0, -1) : path).split('/').slice(1);
  for (const route of registry.byLength.get(parts.length) ?? []) {
    if (!route.segments.every((s, i) => s === null || s === parts[i])) continue;
    const handler = route.handlers[method as FastMethod];
    if (!handler) return undefined;
    const params: Record<string, string> = {};
    let n = 0;
    route.segments.forEach((s, i) => {
      if (s === null) params[route.names[n++]] = parts[i];
    });
    return { handler, params };
  }
  return undefined;
}

/**
 * Bodies that declare a length up to this are read whole before the handler runs (a chat request, a model to
 * create) and given to it as bytes: bridging Node's stream into a web stream (Readable.toWeb) and reading that
 * back chunk by chunk cost more of the request thread than the rest of a relayed completion's request side.
 * Longer bodies, and bodies without a length (chunked), stream as they arrive, so that limits and the body
 * thread act on them before they are held in memory.
 */
const PREREAD_MAX_BYTES = 64 * 1024;

/** Whether a request's body may be read up front: it declares a length, and a small one. */
function bodyFitsPreread(req: http.IncomingMessage): boolean {
  const header = req.headers['content-length'];
  if (req.method === 'GET' || header === undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const length = Number(header);
  return Number.isInteger(length) && length >= 0 && length <= PREREAD_MAX_BYTES;
}

/** The whole body of a request that declared a small length; rejects if the client goes away first. */
function readWhole(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new Error('client closed the request before its body ended'));
    });
  });
}

/** The URL a handler's Request gets; throws on what a Request cannot carry (an unparsable Host). */
function requestUrl(req: http.IncomingMessage): URL {
  return new URL(`http://${req.headers.host ?? 'localhost'}${req.url}`);
}

/** Whether a request carries a body: HTTP/1.1 gives one only by Content-Length or Transfer-Encoding. */
function hasBody(req: http.IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
}

/**
 * The handler's Request, made from Node's: with a body already read or none, a PrereadRequest (far cheaper than
 * undici's, see preread-request.ts); with a body to stream, undici's Request over Node's stream.
 */
function toRequest(req: http.IncomingMessage, res: http.ServerResponse, url: URL, body?: Buffer): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // The handler's req.signal: aborted when the client goes away before the answer is written, which is what
  // stops an upstream relay or the engine's generation (as Next's own request signal does).
  const client = new ClientSignal();
  res.once('close', () => {
    if (!res.writableFinished) client.clientGone();
  });
  // A GET's body (which HTTP allows and no route reads) is not given to the handler, as a Request cannot carry it.
  const streamed = body === undefined && req.method !== 'GET' && hasBody(req);
  if (!streamed) {
    const request = new PrereadRequest(req.method ?? 'GET', url.href, headers, body ?? null, client);
    // lib/api/body.ts reads these bytes directly instead of through a stream.
    if (body) (request as unknown as Record<symbol, Buffer>)[PREREAD_BODY] = body;
    (request as unknown as Record<symbol, boolean>)[FAST_REQUEST] = true;
    return request as unknown as Request;
  }
  const request = new Request(url, {
    method: req.method,
    headers,
    body: Readable.toWeb(req) as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit);
  // Set on the Request itself rather than passed as `signal`: the Request would follow that signal with one of its
  // own, which cost 35 µs of the request thread per request (three times the rest of the Request).
  Object.defineProperty(request, 'signal', { get: () => client.signal });
  (request as unknown as Record<symbol, boolean>)[FAST_REQUEST] = true;
  return request;
}

async function serveRegistered(
  handler: FastHandler,
  params: Record<string, string>,
  request: Request,
  req: http.IncomingMessage,
  res: http.ServerResponse,
) {
  let response: Response;
  try {
    // route() turns every error into a response; this catches only a bug in that.
    response = await handler(request, { params: Promise.resolve(params) });
  } catch (err) {
    log.error({ err }, 'route handler threw');
    response = Response.json(
      { error: { message: 'Internal Server Error', type: 'InternalServerError', param: null, code: 500 } },
      { status: 500 },
    );
  }
  const out: Record<string, string | string[]> = { ...securityHeaders };
  response.headers.forEach((value, key) => {
    if (key !== 'set-cookie') out[key] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  // Answered before the body was read (a 401, 413 or 429): the rest of it is still on the socket, so the connection
  // cannot carry another request.
  if (!req.complete) {
    out.connection = 'close';
    lingerAfterAnswer(req);
  }
  if (res.destroyed) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const text = (response as unknown as Record<symbol, string | undefined>)[FAST_JSON_TEXT];
  if (text !== undefined) {
    await writeJson(req, res, response.status, out, Buffer.from(text));
    return;
  }
  if (!response.body) {
    res.writeHead(response.status, out);
    res.end();
    return;
  }
  // A relayed answer writes itself from the upstream's Node stream (lib/inference/node-writer.ts).
  const writeNode = nodeWriterOf(response.body);
  if (writeNode && !compressible(out)) {
    res.writeHead(response.status, out);
    writeNode(res);
    return;
  }
  const reader = response.body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once('close', gone);
  try {
    if (!compressible(out)) {
      res.writeHead(response.status, out);
      await pipeBody(reader, res);
      return;
    }
    // A JSON answer is one chunk: read whole, it is sent with its length (writeJson). A longer body goes out as it
    // comes, uncompressed.
    const first = await reader.read();
    const second = first.done ? first : await reader.read();
    if (!second.done) {
      out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
      res.writeHead(response.status, out);
      if (!res.write(first.value)) await drained(res);
      if (!res.write(second.value)) await drained(res);
      await pipeBody(reader, res);
      return;
    }
    await writeJson(req, res, response.status, out, first.value ?? new Uint8Array(0));
  } catch {
    // The body failed midway (an upstream that hung up): end the response so the client sees it cut.
    res.destroy();
  } finally {
    res.off('close', gone);
  }
}

/**
 * A whole answer of compressible text, with its length: gzipped (on libuv's thread pool, not this thread) when the
 * client takes gzip and it is worth it, as Next did.
 */
async function writeJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  out: Record<string, string | string[]>,
  body: Uint8Array,
): Promise<void> {
  out.vary = out.vary ? `${out.vary}, Accept-Encoding` : 'Accept-Encoding';
  const accepts = /\bgzip\b(?!;\s*q=0(?:\.0*)?(?:[,\s]|$))/i.test(String(req.headers['accept-encoding'] ?? ''));
  if (body.byteLength >= GZIP_MIN_BYTES && accepts) {
    const zipped = await gzip(body);
    if (res.destroyed) return;
    out['content-encoding'] = 'gzip';
    out['content-length'] = String(zipped.byteLength);
    res.writeHead(status, out);
    res.end(zipped);
    return;
  }
  out['content-length'] = String(body.byteLength);
  res.writeHead(status, out);
  res.end(body);
}

/** How long a connection answered before its body was read goes on taking what the client still sends. */
export const lingering = { idleMs: 5_000, totalMs: 30_000 };

/**
 * Closes a connection whose request body was not read, once its answer is out, without a reset. Node would end
 * the socket and close it at once; the client's next bytes then meet a closed socket, the kernel answers them
 * with a reset, and a client that reads the answer only after sending its body (most clients: httpx, requests,
 * ART's) gets a broken pipe instead of the 413 or 429 and its message. So the server keeps reading and dropping
 * the body, and closes when the body has ended, when the client has gone quiet for `idleMs`, or after `totalMs`
 * (a web server's lingering close). Nothing of the body is kept in memory.
 */
function lingerAfterAnswer(req: http.IncomingMessage) {
  const socket = req.socket;
  // Node's server calls destroySoon() when an answer with `connection: close` has been handed to the socket.
  socket.destroySoon = function lingeringClose(this: typeof socket) {
    // Once the client has sent all it meant to, closing cannot reset: end and close when the answer is flushed,
    // as Node would have at once. Ending earlier is no better: many clients close their side when they see ours
    // end, mid-body, which Node's parser then takes for a broken request.
    const close = () => net.Socket.prototype.destroySoon.call(this);
    const cut = () => this.destroy();
    this.setTimeout(lingering.idleMs, cut);
    const cap = setTimeout(cut, lingering.totalMs).unref();
    this.once('close', () => clearTimeout(cap));
    if (req.complete) return close();
    req.once('end', close);
    // A body given to the handler as a web stream is paused when that stream is full, and holds the socket
    // still: what is left is dropped instead.
    req.removeAllListeners('data');
    req.resume();
  };
}

/** Smaller answers go as they are: gzip's header and the thread-pool hop cost more than the bytes saved. */
const GZIP_MIN_BYTES = 1024;
const gzip = promisify(zlib.gzip);

/** Text worth compressing (JSON, HTML, plain text), unless it streams events or says not to transform it. */
function compressible(headers: Record<string, string | string[]>): boolean {
  const type = String(headers['content-type'] ?? '');
  if (headers['content-encoding'] || /no-transform/i.test(String(headers['cache-control'] ?? ''))) return false;
  return /^(?:application\/(?:[\w.+-]*\+)?json|text\/(?!event-stream))/i.test(type);
}

function drained(res: http.ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const go = () => {
      res.off('drain', go);
      res.off('close', go);
      resolve();
    };
    res.on('drain', go);
    res.on('close', go);
  });
}

/** Writes the rest of a web body to Node's response as it comes (each SSE chunk flushed). */
async function pipeBody(reader: ReadableStreamDefaultReader<Uint8Array>, res: http.ServerResponse): Promise<void> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (res.destroyed) return;
    if (!res.write(value)) await drained(res);
  }
  res.end();
}

/**
 * Installs the fast path on every HTTP server of this process (Next.js creates its own; this runs at start-up,
 * lib/runtime/server-start.ts). Idempotent: Next's dev server may evaluate instrumentation more than once. Returns
 * the uninstall (a no-op from a repeated install).
 */
export function installFastPath(): () => void {
  const proto = http.Server.prototype as http.Server & { [installed]?: boolean };
  if (proto[installed]) return () => undefined;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === 'request') {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      if ((globalThis as Record<symbol, unknown>)[draining]) res.shouldKeepAlive = false;
      if (isHealthProbe(req)) {
        answer(req, res);
        return true;
      }
      const route = matchFastRoute(req.method, req.url ?? '');
      let url: URL | undefined;
      try {
        // Checked before the body is touched: a request Next gets back must still have all of it.
        url = route && requestUrl(req);
      } catch {
        // left to Next
      }
      if (route && url) {
        const failed = (err: unknown) => {
          log.error({ err }, 'fast path failed');
          res.destroy();
        };
        if (bodyFitsPreread(req)) {
          readWhole(req)
            .then(
              (body) =>
                inTurnAsync(() =>
                  serveRegistered(route.handler, route.params, toRequest(req, res, url, body), req, res),
                ),
              // A client that hangs up mid-body has nobody to answer.
              () => void res.destroy(),
            )
            .catch(failed);
          return true;
        }
        let request: Request | undefined;
        try {
          request = toRequest(req, res, url);
        } catch {
          // left to Next
        }
        if (request) {
          inTurnAsync(() => serveRegistered(route.handler, route.params, request, req, res)).catch(failed);
          return true;
        }
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

/** Tests: forget registered routes. */
export function clearFastRoutes(): void {
  registry.byPattern.clear();
  registry.byLength.clear();
}
