import 'server-only';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import securityHeaders from '@/config/security-headers.json';
import { config } from '@/lib/config';
import { nodeWriterOf } from '@/lib/inference/node-writer';
import { componentLogger } from '@/lib/logger';
import { inTurnAsync } from '@/lib/event-loop/turns';
import { CLIENT_ADDRESS, resolveClientAddress } from './client-address';
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
 * - **Every request**, whichever path then serves it, is checked first: a method no route serves (TRACE…) is a JSON
 *   405, a request target that is not a path (`*`, an absolute URL) a JSON 400; and the caller's address is
 *   resolved from the socket (lib/api/client-address.ts) for the per-address sign-in limit.
 * - **Bodies** are not read before the handler asks for them (it authenticates first), and must arrive within
 *   `TUNEBOARD_BODY_TIMEOUT_SECONDS` of its asking (408).
 * - Only a production server registers routes: in `next dev` a route edited on disk must be recompiled by Next,
 *   which a registered handler would bypass. `TUNEBOARD_FAST_ROUTES=0` turns registration off.
 */

const log = componentLogger('api');
/**
 * Where toRequest leaves the reader of a small body (a global symbol: lib/api/body.ts is bundled apart): a function
 * that reads it whole, once, when the handler first asks (lib/api/body.ts), and resolves with its bytes.
 */
export const PREREAD_BODY = Symbol.for('tuneboard.prereadBody');
/**
 * Marks the error a body read fails with when the body did not arrive in time (`TUNEBOARD_BODY_TIMEOUT_SECONDS`):
 * lib/api/body.ts answers it with 408. A mark rather than a class: this module and the route files are bundled apart.
 */
export const BODY_TIMEOUT = Symbol.for('tuneboard.bodyTimeout');
/** Marks the Requests this path makes (lib/api/respond.ts's jsonAnswer). */
export const FAST_REQUEST = Symbol.for('tuneboard.fastRequest');
/** The JSON text of an answer whose Response carries no body (jsonAnswer): written here as it is. */
export const FAST_JSON_TEXT = Symbol.for('tuneboard.fastJsonText');

// ---- What the rest of lib/api may know of the fast path: these three functions, not the marks above -----------

/** The reader of the small body this path read ahead for `req` (call it once), or undefined for any other Request. */
export function prereadBodyOf(req: Request): (() => Promise<Uint8Array>) | undefined {
  return (req as unknown as Record<symbol, (() => Promise<Uint8Array>) | undefined>)[PREREAD_BODY];
}

/** Whether `err` is a body read that failed because the body did not arrive in time (answered 408). */
export function isBodyTimeout(err: unknown): err is Error {
  return Boolean((err as Record<symbol, unknown> | null)?.[BODY_TIMEOUT]);
}

/**
 * A JSON answer to a Request this path made: a Response without a body, its text beside it, which this path writes
 * to the socket as it is (no body stream built and read back). Undefined for any other Request (Next.js in
 * `next dev`, a test calling a handler), which gets an ordinary Response.
 */
export function fastJsonAnswer(req: Request, text: string, init: ResponseInit): Response | undefined {
  if (!(req as unknown as Record<symbol, unknown>)[FAST_REQUEST]) return undefined;
  const response = new Response(null, init);
  (response as unknown as Record<symbol, string>)[FAST_JSON_TEXT] = text;
  return response;
}
const BODY = Buffer.from('{"status":"ok"}');
const PATHS = new Set(['/v1/health', '/v1/health/']);
/**
 * The methods the server serves. Any other (TRACE, PROPFIND…) is refused here with a JSON 405: Next.js answered
 * TRACE with a 500 and a plain-text stack on stdout, and WebDAV methods with an empty 400.
 */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const ALLOW = [...SERVED_METHODS].join(', ');
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

/**
 * A JSON refusal (`{"detail": …}`, the preview routes' error body, docs/contract.md §1.5) of a request no route
 * may see: a method the server does not serve, or a request target that is not a path.
 */
function refuse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const given = req.headers['x-request-id'];
  const body = Buffer.from(JSON.stringify({ detail }));
  res.writeHead(status, {
    ...securityHeaders,
    ...headers,
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': body.length,
    'x-request-id': requestIdFrom(typeof given === 'string' ? given : undefined),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * What Node answers a request its parser refuses (an unknown method token such as TRACK, a malformed request line,
 * headers past its size limit) when the server has no `clientError` listener, as Node's own answer would be, but
 * with a JSON body naming the problem: Node's has none.
 */
function clientErrorAnswer(err: NodeJS.ErrnoException & { reason?: string }): Buffer {
  const [status, text, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request Header Fields Too Large']
      : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
        ? [413, 'Payload Too Large', 'Payload Too Large: chunk extensions too long']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'Request Timeout: the request did not arrive in time']
          : [
              400,
              'Bad Request',
              `Bad Request: the request could not be parsed (${err.reason ?? err.code ?? 'malformed'})`,
            ];
  const body = JSON.stringify({ detail });
  return Buffer.from(
    `HTTP/1.1 ${status} ${text}\r\ncontent-type: application/json\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
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
  addFastRoutes(pattern, handlers);
}

/**
 * registerFastRoutes without its production check: for tests that serve the route files through the fast path as a
 * production server does (tests/support/route-fetch.ts's fastPathFetch).
 */
export function addFastRoutes(pattern: string, handlers: Partial<Record<FastMethod, FastHandler>>): void {
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
 * Bodies that declare a length up to this are read whole, when the handler first asks for them (after it has
 * authenticated the caller: lib/api/route.ts), and given to it as bytes: bridging Node's stream into a web stream
 * and reading that back chunk by chunk cost more of the request thread than the rest of a relayed completion's
 * request side. Longer bodies, and bodies without a length (chunked), stream as they arrive, so that limits and
 * the body thread act on them before they are held in memory.
 *
 * Nothing is read before the handler asks: a body read up front let anyone hold a connection and a handler's
 * place open by declaring 64 KiB and sending one byte less (800 such connections stayed unanswered for 30 s,
 * where Next's path answered all of them 401 at once).
 */
const PREREAD_MAX_BYTES = 64 * 1024;

/** Whether a request's body may be read whole: it declares a length, and a small one. */
function bodyFitsPreread(req: http.IncomingMessage): boolean {
  const header = req.headers['content-length'];
  if (header === undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const length = Number(header);
  return Number.isInteger(length) && length >= 0 && length <= PREREAD_MAX_BYTES;
}

/** Requests whose body did not arrive in time: answered 408 and closed at once, not lingered over. */
const timedOut = new WeakSet<http.IncomingMessage>();

/** The error a body read fails with past `TUNEBOARD_BODY_TIMEOUT_SECONDS` (lib/api/body.ts answers 408). */
function bodyTimeout(req: http.IncomingMessage, ms: number): Error {
  timedOut.add(req);
  return Object.assign(new Error(`The request body did not arrive within ${ms / 1000} s`), { [BODY_TIMEOUT]: true });
}

/**
 * The whole body of a request that declared a small length, read when first asked for; rejects if the client goes
 * away first, or if the body has not arrived whole within `TUNEBOARD_BODY_TIMEOUT_SECONDS` of being asked for (at
 * most 64 KiB: a client sending it slower than that is holding the connection, not uploading).
 */
function readWhole(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const ms = config.bodyTimeoutMs;
    const timer = setTimeout(() => {
      req.off('data', onData);
      reject(bodyTimeout(req, ms));
    }, ms);
    const onData = (chunk: Buffer) => chunks.push(chunk);
    req.on('data', onData);
    req.once('end', () => {
      clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.once('close', () => {
      clearTimeout(timer);
      if (!req.complete) reject(new Error('client closed the request before its body ended'));
    });
  });
}

/**
 * A streamed body as a web stream. Node's own bridge (Readable.toWeb) destroys the request when the stream is
 * cancelled, which a handler does on a body past its limit: that reset the connection under the 413 (6 of 6 chunked
 * bodies), where this leaves the rest for lingerAfterAnswer to drain. A body that stalls for
 * `TUNEBOARD_BODY_TIMEOUT_SECONDS` while the handler waits for it fails the read (408); a pause the handler causes
 * (its queue is full) does not count.
 */
function streamBody(req: http.IncomingMessage, res: http.ServerResponse): ReadableStream<Uint8Array> {
  const ms = config.bodyTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  let onData: (chunk: Buffer) => void = () => undefined;
  const settle = () => {
    settled = true;
    clearTimeout(timer);
    req.off('data', onData);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onData = (chunk: Buffer) => {
          timer?.refresh();
          // A copy, as Node's bridge makes: the chunk may share memory with the socket's other reads.
          controller.enqueue(new Uint8Array(chunk));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        };
        req.on('data', onData);
        req.once('end', () => {
          if (settled) return;
          settle();
          controller.close();
        });
        req.once('error', (err) => {
          if (settled) return;
          settle();
          controller.error(err);
        });
        req.once('close', () => {
          if (settled || req.complete) return;
          settle();
          controller.error(new Error('client closed the request before its body ended'));
        });
        timer = setTimeout(function stalled() {
          if (settled) return;
          // Answered without the rest of the body (a 401): lingerAfterAnswer has the connection now.
          if (res.writableEnded) return settle();
          // Paused for the handler, which has not taken what came: not the client's delay.
          if (req.isPaused() && (controller.desiredSize ?? 0) <= 0) return void timer?.refresh();
          settle();
          controller.error(bodyTimeout(req, ms));
        }, ms);
      },
      pull() {
        if (!settled) req.resume();
      },
      cancel() {
        // The handler stopped reading (a body past its limit): the request is left whole, so that its answer can
        // still be written, and lingerAfterAnswer drops the rest of the body.
        settle();
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** The URL a handler's Request gets; throws on what a Request cannot carry (an unparsable Host). */
function requestUrl(req: http.IncomingMessage): URL {
  return new URL(`http://${req.headers.host ?? 'localhost'}${req.url}`);
}

/** Whether a request carries a body: HTTP/1.1 gives one only by Content-Length or Transfer-Encoding. */
function hasBody(req: http.IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
}

/** The caller's address, from the socket and as far as `TUNEBOARD_TRUSTED_PROXIES` allows X-Forwarded-For. */
function clientAddressOf(req: http.IncomingMessage): string | null {
  return resolveClientAddress(req.socket?.remoteAddress, req.headers['x-forwarded-for'], config.trustedProxies);
}

/**
 * The handler's Request, made from Node's: with a small body or none, a PrereadRequest (far cheaper than undici's,
 * see preread-request.ts) that reads the body when first asked; with a body to stream, undici's Request over it.
 * Nothing of the body is read here: the handler authenticates first.
 */
function toRequest(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Request {
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
  const body = req.method !== 'GET' && hasBody(req);
  if (!body || bodyFitsPreread(req)) {
    let read: Promise<Buffer> | undefined;
    const load = body ? () => (read ??= readWhole(req)) : null;
    const request = new PrereadRequest(req.method ?? 'GET', url.href, headers, load, client);
    const fields = request as unknown as Record<symbol, unknown>;
    // lib/api/body.ts reads these bytes directly instead of through a stream.
    if (load) fields[PREREAD_BODY] = load;
    fields[FAST_REQUEST] = true;
    fields[CLIENT_ADDRESS] = clientAddressOf(req);
    return request as unknown as Request;
  }
  const request = new Request(url, {
    method: req.method,
    headers,
    body: streamBody(req, res),
    duplex: 'half',
  } as RequestInit);
  // Set on the Request itself rather than passed as `signal`: the Request would follow that signal with one of its
  // own, which cost 35 µs of the request thread per request (three times the rest of the Request).
  Object.defineProperty(request, 'signal', { get: () => client.signal });
  const fields = request as unknown as Record<symbol, unknown>;
  fields[FAST_REQUEST] = true;
  fields[CLIENT_ADDRESS] = clientAddressOf(req);
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
    // A body that did not arrive in time is not waited for any longer: the connection closes once the 408 is out.
    if (timedOut.has(req)) req.removeAllListeners('data').resume();
    else lingerAfterAnswer(req);
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
  // Already gone (the client hung up): nothing to linger over.
  if (!socket) return;
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
 * What the fast path does with one request of a Node HTTP server: answers health, refuses what no route serves, or
 * runs a registered route's handler and writes its answer, returning true; false leaves the request to the server's
 * own handler (Next.js), with the caller's address resolved. installFastPath calls it for every server of the
 * process; tests/support/route-fetch.ts's fastPathFetch calls it from a server of its own.
 */
export function serveFast(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if ((globalThis as Record<symbol, unknown>)[draining]) res.shouldKeepAlive = false;
  if (isHealthProbe(req)) {
    answer(req, res);
    return true;
  }
  // Refused here, with TUNEBOARD_FAST_ROUTES=0 too: Next.js answered both with a 500 and a stack on stdout.
  if (!SERVED_METHODS.has(req.method ?? '')) {
    refuse(req, res, 405, `Method Not Allowed: ${req.method} is not served`, { allow: ALLOW });
    return true;
  }
  const target = req.url ?? '';
  if (target.charCodeAt(0) !== 47 /* "/" */) {
    // `*` (OPTIONS * asks about the server as a whole) and absolute URLs (a request meant for a proxy).
    refuse(req, res, 400, 'Bad Request: the request target must be a path such as /v1/health');
    return true;
  }
  const route = matchFastRoute(req.method, target);
  let url: URL | undefined;
  try {
    // Checked before the body is touched: a request Next gets back must still have all of it.
    url = route && requestUrl(req);
  } catch {
    // left to Next
  }
  let request: Request | undefined;
  if (route && url) {
    try {
      request = toRequest(req, res, url);
    } catch {
      // left to Next
    }
  }
  if (route && request) {
    inTurnAsync(() => serveRegistered(route.handler, route.params, request, req, res)).catch((err: unknown) => {
      log.error({ err }, 'fast path failed');
      res.destroy();
    });
    return true;
  }
  // Next.js's handlers read the caller's address from X-Forwarded-For (lib/api/client-address.ts), which Next
  // fills from the socket only when the client sent none: it gets the address resolved here instead.
  const address = clientAddressOf(req);
  if (address) req.headers['x-forwarded-for'] = address;
  else delete req.headers['x-forwarded-for'];
  return false;
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
      if (serveFast(req, res)) return true;
    }
    if (event === 'clientError' && this.listenerCount('clientError') === 0) {
      // Node's own handling (lib/_http_server.js socketOnError), with a JSON body: only when nothing of an answer
      // has gone out on the socket yet.
      const [err, socket] = args as [NodeJS.ErrnoException, net.Socket & { _httpMessage?: http.ServerResponse }];
      if (socket.writable && !socket._httpMessage?.headersSent) socket.write(clientErrorAnswer(err));
      socket.destroy(err);
      return true;
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
