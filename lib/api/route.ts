import 'server-only';
import type { z } from 'zod';
import { authenticate, authenticateTinker, authenticateWorker } from './auth';
import { registerFastRoutes } from './fast-path';
import { readBodyOrSpill, readBodyText, type LargeAdmission } from './body';
import { openBodySink } from './body-offload';
import { ApiError, type ValidationIssue } from '@/lib/errors';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import { nulError, validateJsonBody } from '@/lib/body/parse';
import { requestIdFrom } from './request-id';
import { prepareBody, type BodyKind, type Prepared } from '@/lib/body/prepared';
import { errorResponse, jsonAnswer, type ErrorFlavor } from './respond';
import { JsonText } from '@/lib/schemas/common';
import { assertSessionWriteAllowed } from './session-cookie';
import { admitLargeBody, type LargeBodySlot } from './large-bodies';
import { config } from '@/lib/config';
import type { Principal } from '@/lib/services/accounts';
import { componentLogger, withRequestContext } from '@/lib/logger';

const log = componentLogger('api');

/**
 * Offloadable bodies past this size are parsed on the body thread. JSON.parse, validation and JSON.stringify
 * cost about 15 ms per MiB of trajectory JSON on one core: below 1 MiB the thread's round trip is not worth it,
 * above it the request thread would stall other requests for longer than a health check should wait.
 */
const OFFLOAD_THRESHOLD_BYTES = 1024 * 1024;

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDefinition<P, Q, B, R> {
  /** Which error envelope and 401 text this route uses. Default: preview. */
  flavor?: ErrorFlavor;
  /**
   * `required` (default): a user's API key or session. `public` routes ignore Authorization entirely
   * (health). `worker` routes take the worker token of lib/jobs/server/worker-token.ts. `tinker`: the Tinker SDK's
   * `X-API-Key: tml-<key>` (or a plain bearer key), docs/tinker.md §2.1.
   */
  auth?: 'required' | 'public' | 'worker' | 'tinker';
  params?: P;
  /** Message of the 404 a malformed path id gets (docs/contract.md §1.6: a non-UUID path id is simply unknown). */
  notFound?: string;
  query?: Q;
  body?: B;
  /** `large` for routes that carry trajectories (docs/contract.md §1.4). */
  bodyLimit?: 'large' | 'small';
  /** Routes that set the session cookie: refuse cross-site browsers and bodies not declared JSON (login CSRF). */
  setsSession?: boolean;
  /** Refuse bodies whose Content-Type is not JSON (chat, as vLLM does; preview routes accept any, docs/contract.md §1.4). */
  requireJson?: boolean;
  /**
   * Body fields whose strings may contain NUL (U+0000), which PostgreSQL text cannot hold: model output in
   * trajectories, stored as json. Everywhere else a NUL is refused up front (422) instead of failing in SQL.
   */
  nulAllowedUnder?: string[];
  /**
   * A body kind of lib/body/prepared.ts: the body is parsed, checked and prepared for storage by that kind's
   * code (its schema must be `body`, kept for the OpenAPI document), on the body thread when it is past
   * OFFLOAD_THRESHOLD_BYTES, so that a large body never stalls the request thread; the handler gets
   * `prepared`.
   */
  offload?: BodyKind;
  response?: R;
  /**
   * OpenAPI only: the request body of a route that streams it itself (uploads) instead of parsing it with
   * `body`, as an OpenAPI Request Body Object's `content` map (media type → schema and example).
   */
  streamedBody?: {
    description: string;
    content: Record<string, { schema: Record<string, unknown>; example?: unknown }>;
  };
  /** HTTP status of a successful non-Response result. */
  status?: number;
  /** OpenAPI: one-line summary, longer description, tag, and whether the route extends the interface. */
  summary?: string;
  description?: string;
  tag?: string;
  extension?: boolean;
}

export interface HandlerInput<P, Q, B> {
  req: Request;
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

type NextContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type RouteHandler = ((req: Request, ctx: NextContext) => Promise<Response>) & {
  /** The declaration the handler was built from; lib/openapi reads it, so the document never drifts from the code. */
  definition?: RouteDefinition<Schema | undefined, Schema | undefined, Schema | undefined, Schema | undefined>;
  /** The path `methods()` registered it under, in the route folder's form (`/v1/preview/models/[model_id]`). */
  routePath?: string;
};

function searchParamsObject(url: URL): Record<string, string> {
  // Repeated scalar parameters: the last one wins, as in FastAPI.
  const out: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

/**
 * The declarative wrapper every /v1 handler goes through: authenticate, parse path/query/body with the
 * zod contract, call one service, check the response against its schema outside production, and map
 * every thrown error in one place (lib/api/respond.ts).
 */
export function route<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema | undefined,
  K extends BodyKind,
>(
  def: RouteDefinition<P, Q, B, R> & { offload: K },
  handler: (
    input: HandlerInput<P, Q, undefined> & { principal: Principal; prepared: Prepared<K> },
  ) => Promise<(R extends Schema ? z.input<R> : unknown) | JsonText | Response>,
): RouteHandler;
export function route<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema | undefined = undefined,
>(
  def: RouteDefinition<P, Q, B, R> & { auth: 'public' | 'worker' },
  handler: (input: HandlerInput<P, Q, B>) => Promise<(R extends Schema ? z.input<R> : unknown) | JsonText | Response>,
): RouteHandler;
export function route<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema | undefined = undefined,
>(
  def: RouteDefinition<P, Q, B, R>,
  handler: (
    input: HandlerInput<P, Q, B> & { principal: Principal },
  ) => Promise<(R extends Schema ? z.input<R> : unknown) | JsonText | Response>,
): RouteHandler;
// The implementation sees the union of the overloads; the overloads above carry the precise types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export function route(
  def: RouteDefinition<any, any, any, any>,
  handler: (input: any) => Promise<unknown>,
): RouteHandler {
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const flavor = def.flavor ?? 'preview';
  const handle: RouteHandler = async (req, ctx) => {
    const requestId = requestIdFrom(req.headers.get('x-request-id'));
    const response = await withRequestContext(requestId, () => respond(req, ctx));
    try {
      response.headers.set('x-request-id', requestId);
    } catch {
      // A relayed upstream response has immutable headers; it carries the upstream's own id.
    }
    return response;
  };
  const respond = async (req: Request, ctx: Parameters<RouteHandler>[1]): Promise<Response> => {
    let largeSlot: LargeBodySlot | undefined;
    try {
      if (def.auth === 'worker') authenticateWorker(req);
      const principal =
        def.auth === 'public' || def.auth === 'worker'
          ? undefined
          : def.auth === 'tinker'
            ? await authenticateTinker(req)
            : await authenticate(req, flavor);

      // After authentication, so that an anonymous caller learns nothing, not even that an id is malformed.
      let params: unknown = undefined;
      if (def.params) {
        const raw = ctx?.params ? await ctx.params : {};
        const parsed = def.params.safeParse(raw);
        if (!parsed.success) throw ApiError.notFound(def.notFound ?? 'Not Found');
        params = parsed.data;
      }

      let query: unknown = undefined;
      if (def.query) {
        const raw = searchParamsObject(new URL(req.url));
        const nul = Object.keys(raw).find((k) => raw[k].includes('\u0000'));
        if (nul !== undefined) throw nulError(['query', nul]);
        const parsed = def.query.safeParse(raw, { reportInput: true });
        if (!parsed.success) throw ApiError.validation(zodIssuesToValidation(parsed.error, 'query'));
        query = parsed.data;
      }

      let body: unknown = undefined;
      let prepared: unknown = undefined;
      if (def.setsSession) assertSessionWriteAllowed(req);
      if (def.requireJson && !(req.headers.get('content-type') ?? '').toLowerCase().includes('application/json')) {
        throw new ApiError('bad_request', "Unsupported Media Type: Only 'application/json' is allowed", {
          type: 'Bad Request',
        });
      }
      if (def.body) {
        const limit = def.bodyLimit === 'large' ? config.largeBodyLimitBytes : config.smallBodyLimitBytes;
        const large: LargeAdmission | undefined =
          def.bodyLimit === 'large'
            ? { threshold: config.smallBodyLimitBytes, admit: () => void (largeSlot = admitLargeBody()) }
            : undefined;
        try {
          if (def.offload) {
            const kind: BodyKind = def.offload;
            const read = await readBodyOrSpill(req, limit, large, {
              threshold: OFFLOAD_THRESHOLD_BYTES,
              open: () => openBodySink(kind, flavor),
            });
            prepared = 'spilled' in read ? read.spilled : prepareBody(kind, read.text, flavor);
          } else {
            const text = await readBodyText(req, limit, large);
            body = validateJsonBody(def.body, text, { flavor, nulAllowedUnder: def.nulAllowedUnder });
          }
        } catch (err) {
          if (err instanceof ApiError && err.code === 'validation' && err.issues) {
            throw ApiError.validation(withoutSecrets(err.issues));
          }
          throw err;
        }
      }

      const result = await handler({ req, params, query, body, prepared, principal });
      if (result instanceof Response) return result;
      if (def.response && !config.isProduction) {
        const checked = def.response.safeParse(result instanceof JsonText ? JSON.parse(result.text) : result);
        if (!checked.success) {
          // A contract break is our bug: fail loudly in development and tests rather than ship it.
          log.error(
            { method: req.method, url: req.url, issues: checked.error.issues },
            'response does not match its schema',
          );
          throw new Error('Response schema mismatch');
        }
      }
      return jsonAnswer(req, result instanceof JsonText ? result.text : JSON.stringify(result), {
        status: def.status ?? 200,
      });
    } catch (err) {
      // The client hung up and Next aborted the work it started (ResponseAborted, or an abort surfacing from an
      // upstream fetch): nobody reads an answer, and nothing is broken, so it is not an "unhandled error".
      if (req.signal.aborted) {
        log.debug({ err: (err as Error)?.name }, 'client closed the request before the answer');
        return new Response(null, { status: 499 });
      }
      return errorResponse(err, flavor);
    } finally {
      // Held until the handler is done with the parsed body, not just until it was read.
      largeSlot?.release();
    }
  };
  handle.definition = def;
  return handle;
}

/** Validation answers echo the offending input, except secrets: a password must never come back in a 422. */
function withoutSecrets(issues: ValidationIssue[]): ValidationIssue[] {
  const secret = (k: unknown) => typeof k === 'string' && /password|secret/i.test(k);
  return issues.map((issue) => {
    if (!('input' in issue)) return issue;
    const input = issue.input;
    const holdsSecret = input !== null && typeof input === 'object' && Object.keys(input).some(secret);
    if (!issue.loc.some(secret) && !holdsSecret) return issue;
    const { input: _dropped, ...rest } = issue;
    void _dropped;
    return rest;
  });
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/**
 * Exports for the route file at `path` (its place under app/, in Next's syntax: `/v1/preview/models/[model_id]`,
 * which tests/api/fast-path-routes.test.ts checks): the given methods, and a JSON 405 for every other one, so
 * that no /v1 path ever answers with Next's empty 405 or an HTML page. They are also registered with the fast
 * path (lib/api/fast-path.ts), which serves them ahead of Next's routing in a production server.
 */
export function methods(
  path: string,
  handlers: Partial<Record<Method, RouteHandler>>,
  flavor: ErrorFlavor = 'preview',
): Record<Method, RouteHandler> {
  const allow = Object.keys(handlers).join(', ');
  const notAllowed: RouteHandler = async () =>
    errorResponse(new ApiError('method_not_allowed', 'Method Not Allowed', { headers: { allow } }), flavor);
  const all = Object.fromEntries(METHODS.map((m) => [m, handlers[m] ?? notAllowed])) as Record<Method, RouteHandler>;
  // The one place a route's path is written (beside its folder): the OpenAPI manifest reads it from here.
  for (const handler of Object.values(all)) handler.routePath = path;
  registerFastRoutes(path, all);
  return all;
}
