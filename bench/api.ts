/**
 * `npm run bench:api [-- --quick]`: requests/s and p50/p99 latency of the list routes, the single reads the
 * dashboard and clients poll (a model, a training job) and create model, measured side by side in one run against
 * - Tuneboard's own `/v1/health` served the way every API route is (route handler, no database, no auth: the
 *   gateway's ceiling on this machine; `?via=api`, since the plain probe is answered before any routing and
 *   is shown on its own row),
 * - a bare Node http server answering the same bytes (what no framework can beat), and
 * - the database alone (bench/db-alone.ts): the page queries of three list routes sent from one process with no
 *   HTTP, CONNECTIONS at a time, before the server starts (reference rows, no goal of their own: a route cannot
 *   outrun its own query),
 * on the embedded database (PGlite) and, when DATABASE_URL is set, on PostgreSQL (a scratch database: the
 * run adds a user, models and jobs to it).
 *
 * Goals (issue "Gateway performance"): each route at least 50 % of /v1/health's requests/s, p99 under
 * 25 ms at 10 connections, and paging cost flat from 1k to 1M events (a page of the large job, first, from a
 * cursor near its start or deep into it, within 1.5× the cost of the same kind of page of the small one: its first
 * page, or a page from a cursor). Every figure is printed
 * next to its goal. The run fails (exit 1) when a route answers an error; goals are reported, not enforced, unless
 * --strict: shared CI machines are too noisy to gate on latency.
 *
 * Every case is warmed up first (WARMUP_REQUESTS, not counted).
 *
 * --quick: a 20k-event large job, and each case measured over QUICK_REQUESTS requests sent by plain request loops
 * instead of autocannon, whose shortest run is one second (it stops at its one-second tick): 45 cases took 45 s of
 * CI that way. CI runs this so the benchmark cannot break unnoticed; its figures are a smoke test, not a measurement
 * (the loops' own cost is in them).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { httpRequest } from './http-client';
import { percentile } from './percentile';
import { ensureBuild, startServer } from './server';

const QUICK = process.argv.includes('--quick');
const STRICT = process.argv.includes('--strict');
const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SMALL_EVENTS = 1000;
const LARGE_EVENTS = Number(process.env.BENCH_EVENTS ?? (QUICK ? 20_000 : 1_000_000));
const CHECKPOINTS = Number(process.env.BENCH_CHECKPOINTS ?? 1000);
const PORT = Number(process.env.BENCH_PORT ?? 3210);
const ROOT = path.resolve(import.meta.dirname, '..');

const GOAL_RATIO = 0.5;
/** The backend label's suffix on the reference rows of the database alone (databaseAlone). */
const DB_ALONE = ', database alone (reference: page query, no HTTP)';
const GOAL_P99_MS = 25;
const GOAL_PAGING = 1.5;

interface Measure {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}
interface Row extends Measure {
  backend: string;
  case: string;
}

/**
 * Requests sent to each case before it is measured, not counted: a case's first requests compile its code and
 * prepare its statement, and find the database's pages cold (measured cold, the first second of a list route ran at
 * about 70 % of its rate in the next).
 */
const WARMUP_REQUESTS = QUICK ? 50 : 2000;
const QUICK_REQUESTS = 300;

/** How a case's request is sent (a body is made afresh for each request). */
interface CaseOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: () => string;
}

/** Kept-alive sockets for the request loops, as autocannon keeps its connections. */
const loopAgent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });

/**
 * Sends `total` requests over CONNECTIONS loops: the answers that were not 2xx, and each request's latency
 * (autocannon's own `amount` mode costs about a second of set-up per call, which made the quick run half as long
 * again; fetch cost the loops about 1 ms of CPU a request, which held a quick run's route near 1,000 requests/s).
 */
async function requestLoops(
  url: string,
  opts: CaseOptions,
  total: number,
): Promise<{ errors: number; latencies: number[]; seconds: number }> {
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, loop) => {
      for (let i = loop; i < total; i += CONNECTIONS) {
        const sent = performance.now();
        const { status } = await httpRequest(url, { ...opts, body: opts.body?.(), agent: loopAgent });
        latencies.push(performance.now() - sent);
        if (status < 200 || status >= 300) errors++;
      }
    }),
  );
  return { errors, latencies, seconds: (performance.now() - started) / 1000 };
}

async function warmUp(url: string, opts: CaseOptions, total: number): Promise<number> {
  return (await requestLoops(url, opts, total)).errors;
}

async function run(url: string, opts: CaseOptions): Promise<Measure> {
  if (QUICK) {
    const { errors, latencies, seconds } = await requestLoops(url, opts, QUICK_REQUESTS);
    // Whole milliseconds, as autocannon reports them.
    const at = (p: number) => Math.round(percentile(latencies, p));
    return { rps: Math.round(latencies.length / seconds), p50: at(50), p99: at(99), errors };
  }
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    requests: opts.body ? [{ setupRequest: (req) => ({ ...req, body: opts.body!() }) }] : undefined,
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

type Case = [name: string, url: string, opts: CaseOptions];

/**
 * Runs one of the benchmark's server-side scripts (bench/seed.ts, bench/db-alone.ts) in a process of its own, with the
 * server's import conditions and `env` over this process's environment; returns the JSON of its last line.
 */
function runScript(script: string, args: string[], env: Record<string, string>) {
  const out = execFileSync('npx', ['tsx', '--conditions=react-server', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

async function benchBackend(
  label: string,
  env: Record<string, string>,
): Promise<{ rows: Row[]; samples: Record<string, string> }> {
  const started = Date.now();
  const seed = runScript('bench/seed.ts', [String(CHECKPOINTS), String(SMALL_EVENTS), String(LARGE_EVENTS)], env);
  console.log(
    `[${label}] seeded ${CHECKPOINTS} checkpoints and jobs of ${SMALL_EVENTS} and ${LARGE_EVENTS} events in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  // The HTTP cases bench/db-alone.ts measures the page query of.
  const caseNames = {
    models: 'list models (limit 20)',
    checkpoints: 'list checkpoints (limit 20)',
    events: `list events, ${LARGE_EVENTS} in job, deep cursor (limit 100)`,
  };
  // Before the server starts: the database as the HTTP cases find it (they add models), and PGlite open in one
  // process at a time.
  const reference = databaseAlone(label, env, seed, caseNames);
  // system-check, not health: it answers 200 only once the database is reachable.
  const { base, stop } = await startServer(PORT, { ...env, TUNEBOARD_RUNNER_CONCURRENCY: '0' }, '/v1/system-check');
  try {
    const auth = { authorization: `Bearer ${seed.key}` };
    const events = (job: string, after?: string, limit: number | null = 100) => {
      const query = new URLSearchParams();
      if (limit !== null) query.set('limit', String(limit));
      if (after) query.set('after', after);
      return `${base}/v1/preview/training-jobs/${job}/events?${query}`;
    };
    const cases: Case[] = [
      // The gateway's ceiling: with a query string the probe is not the liveness shortcut but its route handler,
      // served like every other API route (lib/api/fast-path.ts).
      ['/v1/health (ceiling)', `${base}/v1/health?via=api`, {}],
      ['/v1/health (fast path; not a ceiling)', `${base}/v1/health`, {}],
      [caseNames.models, `${base}/v1/preview/models?limit=20`, { headers: auth }],
      [caseNames.checkpoints, `${base}/v1/preview/models/${seed.modelId}/checkpoints?limit=20`, { headers: auth }],
      ["list a model's jobs", `${base}/v1/preview/models/${seed.modelId}/training-jobs`, { headers: auth }],
      // What the dashboard polls besides its lists: the Jobs page, a model's page and a job's page (clients
      // following a job read it too).
      ['list jobs of the caller (Jobs page)', `${base}/v1/preview/training-jobs?limit=25`, { headers: auth }],
      ['get a model', `${base}/v1/preview/models/${seed.modelId}`, { headers: auth }],
      ['get a training job', `${base}/v1/preview/training-jobs/${seed.largeJobId}`, { headers: auth }],
      [`list events, ${SMALL_EVENTS} in job, first page (limit 100)`, events(seed.smallJobId), { headers: auth }],
      [
        `list events, ${SMALL_EVENTS} in job, from a cursor (limit 100)`,
        events(seed.smallJobId, seed.smallCursorEventId),
        { headers: auth },
      ],
      [`list events, ${LARGE_EVENTS} in job, first page (limit 100)`, events(seed.largeJobId), { headers: auth }],
      [
        `list events, ${LARGE_EVENTS} in job, early cursor (limit 100)`,
        events(seed.largeJobId, seed.earlyEventId),
        { headers: auth },
      ],
      [caseNames.events, events(seed.largeJobId, seed.deepEventId), { headers: auth }],
      // What ART sends while it follows a job: no limit (the default page of 20), after its cursor.
      [
        `list events, ${LARGE_EVENTS} in job, deep cursor (no limit: 20, as ART polls)`,
        events(seed.largeJobId, seed.deepEventId, null),
        { headers: auth },
      ],
      [
        'create model',
        `${base}/v1/preview/models`,
        {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: () =>
            JSON.stringify({
              project: 'bench',
              name: `m-${process.hrtime.bigint()}-${Math.random()}`,
              base_model: 'tuneboard/tiny-random',
            }),
        },
      ],
    ];
    const rows: Row[] = [];
    const samples: Record<string, string> = {};
    for (const [name, url, opts] of cases) {
      const res = await fetch(url, { method: opts.method, headers: opts.headers, body: opts.body?.() });
      samples[name] = await res.text();
      if (!res.ok) throw new Error(`[${label}] ${name}: ${res.status} ${samples[name].slice(0, 300)}`);
      const warmupErrors = await warmUp(url, opts, WARMUP_REQUESTS);
      const measured = await run(url, opts);
      // An error while warming up is still an error of the route.
      rows.push({ backend: label, case: name, ...measured, errors: measured.errors + warmupErrors });
    }
    return { rows: [...rows, ...reference], samples };
  } finally {
    await stop();
  }
}

/**
 * The reference rows of the database alone (bench/db-alone.ts): each list route's page query without HTTP, run in
 * a process of its own while no server is running.
 */
function databaseAlone(
  label: string,
  env: Record<string, string>,
  seed: unknown,
  names: Record<string, string>,
): Row[] {
  const measured: { case: string; rps: number; p50: number; p99: number }[] = runScript(
    'bench/db-alone.ts',
    [JSON.stringify(seed), String(CONNECTIONS), QUICK ? `n${QUICK_REQUESTS}` : String(DURATION_S)],
    env,
  );
  return measured.map((m) => ({ ...m, backend: `${label}${DB_ALONE}`, case: names[m.case], errors: 0 }));
}

async function benchCeiling(samples: Record<string, string>): Promise<Row[]> {
  // The same bytes, served by Node's http module with nothing in between.
  const bodies = Object.values(samples);
  const server = http.createServer((req, res) => {
    const body = bodies[Number(new URL(req.url!, 'http://x').searchParams.get('i'))];
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(PORT + 1, '127.0.0.1', r));
  const rows: Row[] = [];
  const names = Object.keys(samples);
  for (let i = 0; i < names.length; i++) {
    const url = `http://127.0.0.1:${PORT + 1}/?i=${i}`;
    const opts = names[i] === 'create model' ? { method: 'POST' as const, body: () => '{}' } : {};
    await warmUp(url, opts, WARMUP_REQUESTS);
    rows.push({ backend: 'bare node http', case: names[i], ...(await run(url, opts)) });
  }
  server.close();
  return rows;
}

const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');

function report(results: Row[]): { misses: number; errors: number } {
  let misses = 0;
  const errors = results.reduce((n, r) => n + r.errors, 0);
  console.log(
    QUICK
      ? `\n${CONNECTIONS} connections, ${QUICK_REQUESTS} requests per case from request loops (--quick: a smoke test, not a measurement)\n`
      : `\n${CONNECTIONS} connections, ${DURATION_S} s per case\n`,
  );
  console.log(
    '| backend | case | req/s | p50 ms | p99 ms | errors | vs /v1/health (goal ≥ 50 %) | p99 (goal < 25 ms) | vs bare node |',
  );
  console.log('|---|---|---:|---:|---:|---:|---|---|---:|');
  for (const r of results) {
    // A reference row of the database alone is set against its backend's /v1/health, and is no goal of its own.
    const reference = r.backend.endsWith(DB_ALONE);
    const server = reference ? r.backend.slice(0, -DB_ALONE.length) : r.backend;
    const health = results.find((h) => h.backend === server && h.case === '/v1/health (ceiling)');
    const bare = results.find((b) => b.backend === 'bare node http' && b.case === r.case);
    const isList = r.backend !== 'bare node http' && !r.case.startsWith('/v1/health');
    const ratio = health && isList ? r.rps / health.rps : undefined;
    const ratioCell =
      ratio === undefined
        ? ''
        : reference
          ? `${(ratio * 100).toFixed(0)} % (reference; the route's bound: ${((ratio / (1 + ratio)) * 100).toFixed(0)} %)`
          : `${(ratio * 100).toFixed(0)} % ${mark(ratio >= GOAL_RATIO)}`;
    const p99Cell = isList && !reference ? `${mark(r.p99 < GOAL_P99_MS)}` : '';
    if (isList && !reference && !(ratio !== undefined && ratio >= GOAL_RATIO)) misses++;
    if (isList && !reference && !(r.p99 < GOAL_P99_MS)) misses++;
    const bareCell = r.backend !== 'bare node http' && bare ? `${((r.rps / bare.rps) * 100).toFixed(1)} %` : '';
    console.log(
      `| ${r.backend} | ${r.case} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${ratioCell} | ${p99Cell} | ${bareCell} |`,
    );
  }

  const references = results.filter((r) => r.backend.endsWith(DB_ALONE));
  if (references.length > 0)
    console.log(
      `\nThe rows "${DB_ALONE.slice(2)}" are each route's page query sent from one process with no HTTP, no auth and ` +
        `no JSON (bench/db-alone.ts), ${CONNECTIONS} at a time, run before the server starts. A route does at least ` +
        `/v1/health's work and its query; on a machine the load keeps busy (the load generator shares it), work adds ` +
        `up, so the route reaches at most about 1 / (1/health + 1/query) requests/s: the bound printed. ${GOAL_RATIO * 100} % ` +
        `of /v1/health needs a query that alone runs at least as fast as /v1/health.`,
    );
  console.log(
    `\nPaging cost from ${SMALL_EVENTS} to ${LARGE_EVENTS} events (latency of a 100-event page, large job ÷ small job, each page from a cursor against the small job's page from a cursor; goal ≤ ${GOAL_PAGING}×)\n`,
  );
  console.log('| backend | page | p50 ms (small → large) | ratio | req/s ratio |');
  console.log('|---|---|---|---|---:|');
  const servers = [...new Set(results.map((r) => r.backend))].filter(
    (b) => b !== 'bare node http' && !b.endsWith(DB_ALONE),
  );
  for (const backend of servers) {
    for (const page of ['first page', 'early cursor', 'deep cursor']) {
      // Like with like: a page from a cursor costs a lookup of the cursor's event more than the first page does.
      const smallPage = page === 'first page' ? 'first page' : 'from a cursor';
      const small = results.find(
        (r) => r.backend === backend && r.case.includes(`${SMALL_EVENTS} in job, ${smallPage}`),
      )!;
      const large = results.find((r) => r.backend === backend && r.case.includes(`${LARGE_EVENTS} in job, ${page}`))!;
      // p50 at millisecond resolution is often 0 or 1 on loopback; requests/s compares the same cost finely.
      const ratio = Math.max(large.p50, 1) / Math.max(small.p50, 1);
      const rpsRatio = small.rps / Math.max(large.rps, 1);
      const ok = rpsRatio <= GOAL_PAGING;
      if (!ok) misses++;
      console.log(
        `| ${backend} | ${page} | ${small.p50} → ${large.p50} | ${ratio.toFixed(2)}× | ${rpsRatio.toFixed(2)}× ${mark(ok)} |`,
      );
    }
  }
  return { misses, errors };
}

async function main() {
  ensureBuild();
  const benchDir = path.join(ROOT, '.data', 'bench');
  fs.rmSync(benchDir, { recursive: true, force: true });
  const common = { TUNEBOARD_ARTIFACT_DIR: path.join(benchDir, 'artifacts') };
  const results: Row[] = [];
  const pglite = await benchBackend('pglite', {
    ...common,
    TUNEBOARD_DATA_DIR: path.join(benchDir, 'pglite'),
    DATABASE_URL: '',
  });
  results.push(...pglite.rows);
  if (process.env.DATABASE_URL) {
    results.push(...(await benchBackend('postgres', { ...common, DATABASE_URL: process.env.DATABASE_URL })).rows);
  } else {
    console.log('DATABASE_URL not set: skipping PostgreSQL (set it to a scratch database to include it)');
  }
  results.push(...(await benchCeiling(pglite.samples)));
  loopAgent.destroy();
  const { misses, errors } = report(results);
  console.log(`\n${errors} error responses; ${misses} goals missed`);
  if (errors > 0 || (STRICT && misses > 0)) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
