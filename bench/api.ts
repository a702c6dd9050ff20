/**
 * `npm run bench:api`: requests/s and p50/p99 latency of list checkpoints, list events (a job with 100k
 * events, first page and a page deep in the table) and create model, against a production server on
 * PGlite and, when DATABASE_URL is set, on PostgreSQL; next to a bare Node http server returning the
 * same JSON, the ceiling. Loopback only, fixed duration per case.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { startServer } from './server';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const CHECKPOINTS = Number(process.env.BENCH_CHECKPOINTS ?? 1000);
const PORT = 3210;
const ROOT = path.resolve(import.meta.dirname, '..');

interface Row {
  backend: string;
  case: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function run(
  url: string,
  opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: () => string },
): Promise<Omit<Row, 'backend' | 'case'>> {
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

async function benchBackend(label: string, env: Record<string, string>): Promise<{ rows: Row[]; samples: Record<string, string> }> {
  const started = Date.now();
  const seedOut = execFileSync('npx', ['tsx', '--conditions=react-server', 'bench/seed.ts', String(CHECKPOINTS), String(EVENTS)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seed = JSON.parse(seedOut.trim().split('\n').at(-1)!);
  console.log(`[${label}] seeded ${CHECKPOINTS} checkpoints and ${EVENTS} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // system-check, not health: it answers 200 only once the database is reachable.
  const { base, stop } = await startServer(PORT, env, '/v1/system-check');
  try {
    const auth = { authorization: `Bearer ${seed.key}` };
    const cases: [string, string, Parameters<typeof run>[1]][] = [
      ['list checkpoints (limit 20)', `${base}/v1/preview/models/${seed.modelId}/checkpoints?limit=20`, { headers: auth }],
      ['list events, first page (limit 100)', `${base}/v1/preview/training-jobs/${seed.jobId}/events?limit=100`, { headers: auth }],
      [
        'list events, deep cursor (limit 100)',
        `${base}/v1/preview/training-jobs/${seed.jobId}/events?limit=100&after=${seed.deepEventId}`,
        { headers: auth },
      ],
      [
        'create model',
        `${base}/v1/preview/models`,
        {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: () =>
            JSON.stringify({ project: 'bench', name: `m-${process.hrtime.bigint()}-${Math.random()}`, base_model: 'tuneboard/tiny-random' }),
        },
      ],
    ];
    const rows: Row[] = [];
    const samples: Record<string, string> = {};
    for (const [name, url, opts] of cases) {
      const res = await fetch(url, { method: opts.method, headers: opts.headers, body: opts.body?.() });
      samples[name] = await res.text();
      rows.push({ backend: label, case: name, ...(await run(url, opts)) });
    }
    return { rows, samples };
  } finally {
    await stop();
  }
}

async function benchCeiling(samples: Record<string, string>): Promise<Row[]> {
  // The same bytes, served by Node's http module with nothing in between: what no framework can beat.
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
    const post = names[i] === 'create model';
    rows.push({
      backend: 'bare node http',
      case: names[i],
      ...(await run(`http://127.0.0.1:${PORT + 1}/?i=${i}`, post ? { method: 'POST', body: () => '{}' } : {})),
    });
  }
  server.close();
  return rows;
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, '.next', 'BUILD_ID'))) {
    console.log('no production build found: running next build');
    execFileSync('npx', ['next', 'build'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  }
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

  console.log(`\n${CONNECTIONS} connections, ${DURATION_S} s per case, ${EVENTS} events in the job\n`);
  console.log('| backend | case | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const r of results) console.log(`| ${r.backend} | ${r.case} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
