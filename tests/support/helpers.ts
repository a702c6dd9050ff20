import crypto from 'node:crypto';
import { beforeAll } from 'vitest';
import { config } from '@/lib/config';
import { getDb } from '@/lib/db/client';
import type { RouteHandler } from '@/lib/api/route';
import * as signUpRoute from '@/app/v1/auth/sign-up/route';
import * as tokenRoute from '@/app/v1/auth/token/route';
import * as modelsRoute from '@/app/v1/preview/models/route';

// Opening the database (PGlite start-up plus migrations) is the slow part of a route-test file; doing it
// in a hook keeps it out of the first test's time budget, which matters on a loaded machine.
beforeAll(async () => {
  await getDb();
}, 120_000);

type Handlers = Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', RouteHandler>>;

export interface CallOptions {
  key?: string;
  cookie?: string;
  body?: unknown;
  /** A raw body string, sent as is (for malformed JSON tests). */
  rawBody?: string;
  params?: Record<string, string | string[]>;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Calls a route module's handler in-process, exactly as Next would, and decodes the JSON answer. */
export async function call<T = any>(
  mod: Handlers,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts: CallOptions = {},
): Promise<CallResult<T>> {
  const url = new URL(path, 'http://localhost:3000');
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.cookie) headers.cookie = opts.cookie;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const handler = mod[method];
  if (!handler) throw new Error(`route module has no ${method}`);
  const res = await handler(new Request(url, { method, headers, body }), {
    params: Promise.resolve(opts.params ?? {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  if (res.headers.get('content-type')?.includes('application/json')) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export function uniqueName(prefix = 'u'): string {
  return `${prefix}${crypto.randomBytes(5).toString('hex')}`;
}

export interface TestUser {
  email: string;
  password: string;
  handle: string;
  key: string;
  cookie: string;
}

/** Every test creates its own user (and so its own entity): no data is shared between tests. */
export async function createUser(): Promise<TestUser> {
  const handle = uniqueName('user-');
  const email = `${handle}@example.test`;
  const password = 'correct horse battery';
  const signUp = await call(signUpRoute, 'POST', '/v1/auth/sign-up', { body: { email, password, username: handle } });
  if (signUp.status !== 201) throw new Error(`sign-up failed: ${JSON.stringify(signUp.body)}`);
  const cookie = signUp.headers.get('set-cookie')!.split(';')[0];
  const token = await call(tokenRoute, 'POST', '/v1/auth/token', { body: { email, password, key_name: 'tests' } });
  if (token.status !== 201) throw new Error(`token failed: ${JSON.stringify(token.body)}`);
  return { email, password, handle, key: token.body.key, cookie };
}

export const TEST_BASE_MODEL = 'tuneboard/tiny-random';

export async function createModel(user: TestUser, overrides: Record<string, unknown> = {}) {
  const res = await call(modelsRoute, 'POST', '/v1/preview/models', {
    key: user.key,
    body: { project: 'proj', name: uniqueName('model-'), base_model: TEST_BASE_MODEL, ...overrides },
  });
  if (res.status !== 200) throw new Error(`create model failed: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; entity: string; project: string; name: string; base_model: string; run_id: string };
}

// ---------------------------------------------------------------------------------------------------
// Seeding helpers. There is no job runner in the route tests, so tests that need checkpoints past step 0,
// job events or datasets write them through lib/db and lib/services, always scoped to their own user.

/** The Principal a user's API key resolves to, for calling services directly (e.g. storeDataset). */
export async function principalOf(user: TestUser) {
  const { principalFromApiKey } = await import('@/lib/services/accounts');
  const principal = await principalFromApiKey(user.key);
  if (!principal) throw new Error('the test user key does not resolve');
  return principal;
}

/**
 * Inserts checkpoint rows for the given steps (as a finished job would), and moves the model's
 * highest-ever step along so that step numbering stays consistent.
 */
export async function seedCheckpoints(modelId: string, steps: number[], metrics: Record<string, number> = {}) {
  const { checkpoints, models } = await import('@/lib/db/schema');
  const { eq, sql } = await import('drizzle-orm');
  const db = await getDb();
  if (steps.length === 0) return [];
  const rows = await db
    .insert(checkpoints)
    .values(steps.map((step) => ({ modelId, step, metrics })))
    .returning();
  await db
    .update(models)
    .set({
      lastStep: sql`greatest(${models.lastStep}, ${Math.max(...steps)})`,
      checkpointCount: sql`${models.checkpointCount} + ${rows.length}`,
    })
    .where(eq(models.id, modelId));
  // As a finished job does: chat requests for the model's latest checkpoint must see these.
  const { modelsChanged } = await import('@/lib/services/served-models');
  await modelsChanged([modelId]);
  return rows.sort((a, b) => a.step - b.step);
}

/** Submits an RL job through the route and returns its id. */
export async function createRlJob(user: TestUser, modelId: string, body: Record<string, unknown> = {}) {
  const trainingJobsRoute = await import('@/app/v1/preview/training-jobs/route');
  const res = await call(trainingJobsRoute, 'POST', '/v1/preview/training-jobs', {
    key: user.key,
    body: { model_id: modelId, trajectory_groups: [], ...body },
  });
  if (res.status !== 200) throw new Error(`create RL job failed: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** Appends events to a job, in order, as the runner would. */
export async function seedEvents(
  jobId: string,
  events: {
    type: 'training_started' | 'gradient_step' | 'training_ended' | 'training_failed';
    data: Record<string, unknown>;
  }[],
) {
  const { insertEvent } = await import('@/lib/db/repositories/training');
  const db = await getDb();
  const rows = [];
  for (const e of events) rows.push(await insertEvent(db, jobId, e.type, e.data));
  return rows;
}

/** Polls `check` every 20 ms until it holds or `ms` have passed; its last answer. */
export async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/**
 * A change notice sent the way another server process sends it: on PostgreSQL a NOTIFY on a connection of its
 * own; on PGlite (one process) `inProcess`, the service's own publish.
 */
export async function noticeFromElsewhere(channel: string, payload: string, inProcess: () => Promise<void>) {
  if (!config.databaseUrl) return inProcess();
  const { Client } = await import('pg');
  const other = new Client({ connectionString: config.databaseUrl });
  await other.connect();
  await other.query(`select pg_notify($1, $2)`, [channel, payload]);
  await other.end();
}
