import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as openapiRoute from '@/app/v1/openapi.json/route';
import * as claimRoute from '@/app/v1/workers/claim/route';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import { routeManifest } from '@/app/v1/route-manifest';
import type { RouteHandler } from '@/lib/api/route';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import {
  call,
  createModel,
  createRlJob,
  createUser,
  TEST_BASE_MODEL,
  uniqueName,
  type TestUser,
} from '../support/helpers';

/**
 * The project rule: bad input always gets a clear 4xx with a JSON error body, never a 500 or a hang. This sweep
 * takes every operation from the OpenAPI document (so a new route is swept without anyone remembering to add it)
 * and throws a fixed set of malformed paths, queries and bodies at it, as a user, as a worker and anonymously.
 * Deeply nested JSON and oversized bodies have files of their own (deep-json, large-bodies).
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
};
interface Operation {
  path: string;
  method: Method;
  handler: RouteHandler;
  pathParams: string[];
  query: { name: string; required: boolean }[];
  body?: { streamed: boolean; schema?: JsonSchema };
  security: 'public' | 'worker' | 'user';
  chat: boolean;
}

/** Long enough to catch a hang, short enough that the sweep still finishes well inside its budget when one does. */
const ANSWER_TIMEOUT_MS = 5_000;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const WORKER_ID = 'sweep-worker';

/** Path values that are well formed but name nothing, per parameter name (ids are UUIDs, steps digits). */
const UNKNOWN_PARAM: Record<string, string> = { step: '7', team: 'no-such-team-sweep' };
const MALFORMED_PARAMS = [
  '\u0000',
  '%00',
  'x'.repeat(5000),
  '../..',
  '..%2F..',
  '-1',
  '99999999999999999999',
  '2147483648',
  '1e3',
  ' ',
  '',
  '😀',
  "'; select 1; --",
  `${UNKNOWN_ID}\u0000`,
  UNKNOWN_ID.toUpperCase().replace(/-/g, ''),
];

/** Values for numeric, cursor, enum and free-text query parameters alike: each is tried alone on every parameter. */
const BAD_QUERY_VALUES = [
  '',
  ' ',
  '-1',
  '0',
  '1.5',
  '99999999999999999999',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '0x10',
  'abc',
  'true',
  '[]',
  '{}',
  '%',
  '\u0000',
  'x'.repeat(5000),
  'not-a-uuid',
  UNKNOWN_ID,
  'unknown-enum-value',
  '😀',
];

/** Raw JSON texts put in place of one field: wrong types, huge / negative / non-finite numbers, unknown enums. */
const BAD_FIELD_VALUES = [
  'null',
  '"x"',
  '""',
  '12345',
  '-1',
  '0',
  '1.5',
  '1e308',
  '-1e308',
  '1e999',
  '99999999999999999999',
  '2147483648',
  'true',
  '[]',
  '{}',
  '["x"]',
  '[null]',
  '[{}]',
  '[-1]',
  '[99999999999999999999]',
  '"NaN"',
  '"-1"',
  '"unknown-enum-value"',
  JSON.stringify('x'.repeat(5000)),
  '"\\u0000"',
  '"a\\r\\nb: c"',
  '"😀"',
];

/** Whole bodies that are not JSON, or not the object every JSON route expects. */
const BAD_BODIES = [
  '{',
  '{"a":',
  '}',
  'nul',
  'undefined',
  '[]',
  '[1,2]',
  '"s"',
  '42',
  '-1',
  'null',
  'true',
  '',
  ' ',
  '{}',
];
const BAD_CONTENT_TYPES = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=sweep',
  'application/json; charset=latin1',
  'application/octet-stream',
];

let user: TestUser;
let fixture: { modelId: string; jobId: string; workerJobId: string; team: string };
const createdJobs: string[] = [];

function operations(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths)) {
    const entry = routeManifest.find((r) => r.path === path);
    if (!entry) throw new Error(`no route module for ${path}`);
    for (const [m, op] of Object.entries(byMethod)) {
      const method = m.toUpperCase() as Method;
      const handler = (entry.module as Partial<Record<Method, RouteHandler>>)[method];
      if (!handler) throw new Error(`${path} documents ${method} but exports no handler`);
      const parameters = (op.parameters ?? []) as { name: string; in: string; required: boolean }[];
      const requestBody = op.requestBody as { content: Record<string, { schema?: JsonSchema }> } | undefined;
      const security = op.security as Record<string, unknown>[];
      ops.push({
        path,
        method,
        handler,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map(({ name, required }) => ({ name, required })),
        body: requestBody
          ? {
              streamed: !requestBody.content['application/json'],
              schema: requestBody.content['application/json']?.schema,
            }
          : undefined,
        security: security.length === 0 ? 'public' : security.some((s) => 'workerToken' in s) ? 'worker' : 'user',
        chat: (op.tags as string[])[0] === 'chat',
      });
    }
  }
  // Ending the worker's job is done last, so that the routes before it still see a running job.
  const last = (op: Operation) => (/\/(complete|fail)$/.test(op.path) ? 1 : 0);
  return ops.sort((a, b) => last(a) - last(b));
}

/** Path values that name this test's own resources, so that query and body checks get past the lookups. */
function realParams(op: Operation): Record<string, string> {
  const real: Record<string, string> = {
    model_id: fixture.modelId,
    training_job_id: op.security === 'worker' ? fixture.workerJobId : fixture.jobId,
    step: '0',
    team: fixture.team,
    key_id: UNKNOWN_ID,
    user_id: UNKNOWN_ID,
  };
  return Object.fromEntries(op.pathParams.map((p) => [p, real[p] ?? UNKNOWN_ID]));
}

/** Required query parameters get a sane value, so that the one under test is the only bad one. */
function requiredQuery(op: Operation): Record<string, string> {
  const sane: Record<string, string> = { worker_id: WORKER_ID, project: 'sweep', name: 'sweep' };
  return Object.fromEntries(op.query.filter((q) => q.required).map((q) => [q.name, sane[q.name] ?? 'x']));
}

/** A body the route would accept, for the routes whose checks run after the body parses: each field is spoiled in turn. */
function validBody(op: Operation): Record<string, unknown> {
  const email = `${uniqueName('sweep-')}@example.test`;
  const bodies: Record<string, Record<string, unknown>> = {
    'POST /v1/preview/models': { project: 'sweep', name: uniqueName('m-'), base_model: TEST_BASE_MODEL },
    'POST /v1/preview/training-jobs': { model_id: fixture.modelId, trajectory_groups: [] },
    'POST /v1/preview/sft-training-jobs': {
      model_id: fixture.modelId,
      training_data_url: `wandb-artifact:///${user.handle}/sweep/none:v0`,
    },
    'POST /v1/preview/models/{model_id}/log': { split: 'val', trajectory_groups: [] },
    'POST /v1/preview/models/{model_id}/ab-votes': { a_step: 0, b_step: 0, winner: 'tie', prompt: 'p' },
    'DELETE /v1/preview/models/{model_id}/checkpoints': { steps: [99] },
    'POST /v1/auth/sign-up': { email, password: 'correct horse battery', username: uniqueName('h-') },
    'POST /v1/auth/sign-in': { email: user.email, password: 'wrong password sweep' },
    'POST /v1/auth/token': { email: user.email, password: 'wrong password sweep', key_name: 'k' },
    'POST /v1/api-keys': { name: 'sweep' },
    'POST /v1/teams': { name: uniqueName('t-') },
    'POST /v1/teams/{team}/members': { email, role: 'member' },
    // Scoped to this test's model: an unscoped claim would take other files' queued jobs.
    'POST /v1/workers/claim': { worker_id: WORKER_ID, model_ids: [fixture.modelId] },
    'POST /v1/workers/jobs/{training_job_id}/heartbeat': { worker_id: WORKER_ID },
    'POST /v1/workers/jobs/{training_job_id}/events': { worker_id: WORKER_ID, events: [] },
    'POST /v1/workers/jobs/{training_job_id}/complete': { worker_id: WORKER_ID, artifact_key: 'k' },
    'POST /v1/workers/jobs/{training_job_id}/fail': { worker_id: WORKER_ID, error_message: 'sweep' },
    'POST /v1/chat/completions': {
      model: TEST_BASE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 1,
    },
  };
  return bodies[`${op.method} ${op.path}`] ?? {};
}

/** `base` as JSON text with `field` replaced by a raw JSON text (so that 1e999 and 2^64 reach the parser as sent). */
function withField(base: Record<string, unknown>, field: string, raw: string): string {
  const marker = '"__sweep_field__"';
  return JSON.stringify({ ...base, [field]: JSON.parse(marker) }).replace(marker, () => raw);
}

/** Field-level bodies: each top-level property spoiled, and each property of an array's items. */
function fieldBodies(op: Operation): string[] {
  const schema = op.body?.schema;
  if (!schema?.properties) return [];
  const base = validBody(op);
  const out: string[] = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    for (const raw of BAD_FIELD_VALUES) out.push(withField(validBody(op), name, raw));
    const items = prop.items ?? prop.anyOf?.find((s) => s.items)?.items;
    for (const [inner] of Object.entries(items?.properties ?? {})) {
      for (const raw of BAD_FIELD_VALUES) {
        out.push(withField(base, name, `[${withField({}, inner, raw)}]`));
      }
    }
  }
  return out;
}

interface Attempt {
  op: Operation;
  what: string;
  params: Record<string, string>;
  query?: Record<string, string>;
  auth: 'user' | 'worker' | 'none';
  body?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  text: string;
}

async function send(a: Attempt): Promise<Answer | 'timeout'> {
  const url = new URL(
    a.op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(a.params[n] ?? '')),
    'http://localhost:3000',
  );
  for (const [k, v] of Object.entries(a.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  if (a.auth === 'user') headers.authorization = `Bearer ${user.key}`;
  if (a.auth === 'worker') headers.authorization = `Bearer ${bootWorkerToken()}`;
  if (a.contentType) headers['content-type'] = a.contentType;
  Object.assign(headers, a.headers);
  const withBody = a.body !== undefined && a.op.method !== 'GET';
  const answer = (async () => {
    const res = await a.op.handler(
      new Request(url, { method: a.op.method, headers, body: withBody ? (a.body as BodyInit) : undefined }),
      { params: Promise.resolve(a.params) },
    );
    if (res.headers.get('content-type')?.includes('json')) return { status: res.status, text: await res.text() };
    // A download or an event stream: its status is what this sweep judges; the rest need not be produced.
    await res.body?.cancel();
    return { status: res.status, text: '' };
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), ANSWER_TIMEOUT_MS)),
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What is wrong with the answer to a bad request, or undefined when it is a proper one. */
function fault(a: Attempt, answer: Answer | 'timeout'): string | undefined {
  if (answer === 'timeout') return `no answer within ${ANSWER_TIMEOUT_MS} ms`;
  if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 200)}`;
  if (answer.status < 400) return undefined;
  let body: { detail?: unknown; error?: { message?: unknown } };
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `${answer.status} without a JSON body`;
  }
  const message = a.op.chat
    ? body.error?.message
    : Array.isArray(body.detail)
      ? (body.detail as { msg?: unknown }[])[0]?.msg
      : body.detail;
  if (typeof message !== 'string' || message === '')
    return `${answer.status} without an error message: ${answer.text.slice(0, 200)}`;
  return undefined;
}

async function sweep(attempts: Attempt[]): Promise<string[]> {
  const faults: string[] = [];
  for (const a of attempts) {
    const problem = fault(a, await send(a));
    if (problem) {
      const q = a.query ? ` ?${new URLSearchParams(a.query).toString().slice(0, 80)}` : '';
      faults.push(`${a.op.method} ${a.op.path} [${a.auth}] ${a.what}${q}: ${problem}`);
    }
  }
  return faults;
}

function authsFor(op: Operation): Attempt['auth'][] {
  if (op.security === 'public') return ['none'];
  if (op.security === 'worker') return ['worker', 'user', 'none'];
  return ['user', 'none'];
}

let ops: Operation[];

beforeAll(async () => {
  user = await createUser();
  const model = await createModel(user);
  const jobId = await createRlJob(user, model.id);
  // A second job, claimed by the sweep's worker, so that worker routes get past "not your job".
  const workerJobId = await createRlJob(user, model.id);
  createdJobs.push(jobId, workerJobId);
  const claimed = await call(claimRoute, 'POST', '/v1/workers/claim', {
    headers: { authorization: `Bearer ${bootWorkerToken()}` },
    body: { worker_id: WORKER_ID, model_ids: [model.id] },
  });
  if (claimed.status !== 200 || !claimed.body.job) throw new Error(`claim failed: ${JSON.stringify(claimed.body)}`);
  fixture = {
    modelId: model.id,
    jobId: claimed.body.job.id === jobId ? workerJobId : jobId,
    workerJobId: claimed.body.job.id,
    team: user.handle,
  };
  const doc = (await call(openapiRoute, 'GET', '/v1/openapi.json')).body;
  ops = operations(doc);
}, 60_000);

afterAll(async () => {
  // Queued jobs left behind would be claimed by a later file's unscoped worker in this fork.
  for (const id of createdJobs) {
    await call(cancelRoute, 'POST', '/x', { key: user.key, params: { training_job_id: id } });
  }
});

describe('bad input sweep over every documented operation', () => {
  it('covers the whole document', () => {
    expect(ops.length).toBeGreaterThan(40);
    expect(ops.some((op) => op.body?.streamed)).toBe(true);
  });

  it('answers malformed and unknown path parameters with a 4xx', async () => {
    const attempts: Attempt[] = [];
    for (const op of ops.filter((o) => o.pathParams.length > 0)) {
      for (const auth of authsFor(op)) {
        for (const name of op.pathParams) {
          for (const value of [UNKNOWN_PARAM[name] ?? UNKNOWN_ID, ...MALFORMED_PARAMS]) {
            attempts.push({
              op,
              what: `path ${name}=${JSON.stringify(value.slice(0, 20))}`,
              params: { ...realParams(op), [name]: value },
              query: requiredQuery(op),
              auth,
              body: op.body ? '{}' : undefined,
              contentType: 'application/json',
            });
          }
        }
      }
    }
    expect(await sweep(attempts)).toEqual([]);
  });

  it('answers bad query parameter values with a 4xx', async () => {
    const attempts: Attempt[] = [];
    for (const op of ops.filter((o) => o.query.length > 0)) {
      for (const auth of authsFor(op)) {
        for (const { name } of op.query) {
          // Anonymous callers are refused before the query is read: one value is enough to show it.
          for (const value of auth === op.security ? BAD_QUERY_VALUES : BAD_QUERY_VALUES.slice(0, 1)) {
            attempts.push({
              op,
              what: `query`,
              params: realParams(op),
              query: { ...requiredQuery(op), [name]: value },
              auth,
              // Upload routes read their body only after the query: an empty one keeps the query the only fault.
              body: op.body?.streamed ? '' : undefined,
            });
          }
        }
      }
    }
    expect(await sweep(attempts)).toEqual([]);
  });

  it('answers two bad query parameters at once with a 4xx', async () => {
    const attempts: Attempt[] = [];
    for (const op of ops.filter((o) => o.query.length > 1)) {
      const auth = op.security === 'public' ? 'none' : op.security;
      for (const [i, { name: first }] of op.query.entries()) {
        for (const { name: second } of op.query.slice(i + 1)) {
          for (const value of ['-1', '2147483648', 'not-a-uuid', UNKNOWN_ID, '']) {
            attempts.push({
              op,
              what: 'query pair',
              params: realParams(op),
              query: { ...requiredQuery(op), [first]: value, [second]: value },
              auth,
              body: op.body?.streamed ? '' : undefined,
            });
          }
        }
      }
      if (op.query.some((q) => q.name === 'from_step')) {
        attempts.push({
          op,
          what: 'inverted range',
          params: realParams(op),
          query: { from_step: '9', to_step: '1' },
          auth,
        });
      }
    }
    expect(await sweep(attempts)).toEqual([]);
  });

  it('answers malformed credentials with a 4xx', async () => {
    const attempts: Attempt[] = [];
    const credentials: Record<string, string>[] = [
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: `Bearer ${'x'.repeat(5000)}` },
      { authorization: 'Bearer \u00ff\u00fe' },
      { authorization: `Bearer ${UNKNOWN_ID}` },
      { authorization: 'bearer tb_' },
      { cookie: 'tb_session=' },
      { cookie: `tb_session=${'x'.repeat(5000)}` },
      { cookie: 'tb_session=%ZZ; tb_session=%00' },
      { cookie: 'tb_session="\u00ff"' },
      { 'x-request-id': 'x'.repeat(5000) },
    ];
    for (const op of ops) {
      for (const headers of credentials) {
        attempts.push({
          op,
          what: `headers ${JSON.stringify(headers).slice(0, 60)}`,
          params: realParams(op),
          query: requiredQuery(op),
          auth: 'none',
          headers,
          body: op.body ? '{}' : undefined,
          contentType: 'application/json',
        });
      }
    }
    expect(await sweep(attempts)).toEqual([]);
  });

  it('answers bodies that are not JSON objects, or have the wrong content type, with a 4xx', async () => {
    const attempts: Attempt[] = [];
    for (const op of ops.filter((o) => o.body)) {
      for (const auth of authsFor(op)) {
        const bodies = auth === op.security ? BAD_BODIES : BAD_BODIES.slice(0, 1);
        for (const body of bodies) {
          attempts.push({
            op,
            what: `body ${JSON.stringify(body)}`,
            params: realParams(op),
            query: requiredQuery(op),
            auth,
            body,
            contentType: 'application/json',
          });
        }
        if (auth !== op.security) continue;
        for (const contentType of BAD_CONTENT_TYPES) {
          for (const body of ['{}', 'a=1&b=2', '--sweep\r\nContent-Disposition: form-data; name="file"\r\n\r\nx']) {
            attempts.push({
              op,
              what: `content-type ${contentType} body ${JSON.stringify(body.slice(0, 20))}`,
              params: realParams(op),
              query: requiredQuery(op),
              auth,
              body,
              contentType,
            });
          }
        }
        // Bytes that are not UTF-8.
        attempts.push({
          op,
          what: 'invalid UTF-8',
          params: realParams(op),
          query: requiredQuery(op),
          auth,
          body: new Uint8Array([0x7b, 0xff, 0xfe, 0x22, 0xc3, 0x28, 0x7d]),
          contentType: 'application/json',
        });
      }
    }
    expect(await sweep(attempts)).toEqual([]);
  });

  it('answers fields of the wrong type, out of range or of unknown enum values with a 4xx', async () => {
    const attempts: Attempt[] = [];
    for (const op of ops.filter((o) => o.body && !o.body.streamed)) {
      const auth = op.security === 'public' ? 'none' : op.security;
      for (const body of fieldBodies(op)) {
        attempts.push({
          op,
          what: `body ${body.slice(0, 120)}`,
          params: realParams(op),
          query: requiredQuery(op),
          auth,
          body,
          contentType: 'application/json',
        });
      }
    }
    expect(attempts.length).toBeGreaterThan(500);
    expect(await sweep(attempts)).toEqual([]);
    // Thousands of attempts one after another (the Tinker API's routes added a third): 17 s alone on the 2-core
    // machine, over 30 s beside the rest of the suite.
  }, 120_000);
});
