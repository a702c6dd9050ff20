/**
 * `npm run bench:worker [-- --quick]`: the training worker's speed.
 *
 * 1. Throughput (tuneboard_worker/bench.py, its arguments passed through): the Python worker's SFT training against a
 *    bare PyTorch + PEFT loop on the same model and batches; trained tokens/s, peak memory, the worker's overhead.
 * 2. Start-up latency (issue 43 item 4): job created → training_started for a warm worker, goal < 200 ms. A production
 *    server (its own embedded database in a fresh folder, whatever DATABASE_URL says) with one built-in worker
 *    (TUNEBOARD_RUNNER_CONCURRENCY=1: the Node worker, on tuneboard/tiny-random) and the Python worker as users run it
 *    (`python -m tuneboard_worker`, on the tiny Qwen3 of part 1). Each worker first trains one job (cold: the Python
 *    worker loads the base model), then, once parked in its claim, gets N jobs one after another; each job's latency is
 *    the server's own timestamps: the job's created_at to its training_started event's created_at, split at the claim
 *    (started_at). The jobs are RL jobs without trajectory groups, so nothing but the start-up is measured.
 *
 * --quick (CI): the throughput part's quick mode and 3 warm jobs per worker; a smoke test within CI's 240 s. Goals are
 * printed, not enforced. Environment: BENCH_PORT (default 3270), BENCH_SERVER_LOG=1, TUNEBOARD_BENCH_PYTHON.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuild, startServer, type BenchServer } from './server';

const ROOT = path.resolve(import.meta.dirname, '..');
const QUICK = process.argv.includes('--quick');
const PORT = Number(process.env.BENCH_PORT ?? 3270);
const WARM_JOBS = QUICK ? 3 : 10;
const GOAL_MS = 200;
const DIR = path.join(ROOT, '.data', 'bench-worker');
const TINY_QWEN = path.join(DIR, 'tiny-qwen3');
const HF_BASE = 'bench/tiny-qwen3';
const BUILTIN_BASE = 'tuneboard/tiny-random';
const WORKER_TOKEN = 'tbw_bench-worker-token-0123456789abcdef';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function python(args: string[], stdio: 'inherit' | ['ignore', number, number]): ChildProcess {
  return spawn('bash', [path.join(ROOT, 'scripts', 'worker-python.sh'), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      PYTHONUNBUFFERED: '1',
      ...(process.env.TUNEBOARD_BENCH_PYTHON ? { TUNEBOARD_PYTHON: process.env.TUNEBOARD_BENCH_PYTHON } : {}),
    },
    stdio,
  });
}

class Api {
  constructor(
    readonly base: string,
    private key = '',
  ) {}
  async call<T>(method: string, p: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}${p}`, {
      method,
      headers: {
        ...(this.key ? { authorization: `Bearer ${this.key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }
}

interface Job {
  id: string;
  status: string;
  created_at: string;
  started_at: string | null;
  error_message: string | null;
}
interface JobEvent {
  type: string;
  data: Record<string, unknown>;
  created_at: string;
}

async function waitFinished(api: Api, jobId: string, ms: number): Promise<Job> {
  const deadline = Date.now() + ms;
  for (;;) {
    const job = await api.call<Job>('GET', `/v1/preview/training-jobs/${jobId}`);
    if (job.status === 'COMPLETED') return job;
    if (job.status === 'FAILED') throw new Error(`job ${jobId} failed: ${job.error_message}`);
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status} after ${ms / 1000} s`);
    await sleep(50);
  }
}

/** created → claimed → training_started of one finished job, from the server's timestamps (ms). */
async function latencyOf(api: Api, job: Job) {
  const events = await api.call<{ data: JobEvent[] }>('GET', `/v1/preview/training-jobs/${job.id}/events?limit=5`);
  const started = events.data.find((e) => e.type === 'training_started');
  if (!started || !job.started_at) throw new Error(`job ${job.id} has no training_started`);
  const created = Date.parse(job.created_at);
  return {
    total: Date.parse(started.created_at) - created,
    claim: Date.parse(job.started_at) - created,
    load: typeof started.data.load_seconds === 'number' ? started.data.load_seconds * 1000 : null,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function measure(api: Api, baseModel: string, label: string, coldMs: number) {
  const model = await api.call<{ id: string }>('POST', '/v1/preview/models', {
    project: 'bench-worker',
    name: `${label.toLowerCase()}-${Date.now()}`,
    base_model: baseModel,
  });
  const submit = () =>
    api.call<{ id: string }>('POST', '/v1/preview/training-jobs', { model_id: model.id, trajectory_groups: [] });
  // Cold: the worker may still be starting, and the Python worker loads the base model for it.
  const cold = await latencyOf(api, await waitFinished(api, (await submit()).id, coldMs));
  const warm: Awaited<ReturnType<typeof latencyOf>>[] = [];
  for (let i = 0; i < WARM_JOBS; i++) {
    // The worker is back in its parked claim by now (it completes, then claims at once).
    await sleep(300);
    warm.push(await latencyOf(api, await waitFinished(api, (await submit()).id, 60_000)));
  }
  return { label, cold, warm };
}

async function latencyBench(): Promise<void> {
  ensureBuild();
  fs.rmSync(path.join(DIR, 'server'), { recursive: true, force: true });
  fs.mkdirSync(path.join(DIR, 'server'), { recursive: true });
  const baseModelsFile = path.join(DIR, 'server', 'base-models.json');
  fs.writeFileSync(
    baseModelsFile,
    JSON.stringify({
      models: [
        { id: BUILTIN_BASE, backend: 'builtin', description: 'Tiny random-init model' },
        { id: HF_BASE, backend: 'hf', path: TINY_QWEN, description: 'Tiny random Qwen3' },
      ],
    }),
  );
  let server: BenchServer | undefined;
  let worker: ChildProcess | undefined;
  try {
    server = await startServer(
      PORT,
      {
        // Always its own embedded database, even where DATABASE_URL names one (CI's, shared with bench:api and
        // bench:tinker running beside it): this server's built-in worker would claim their jobs.
        TUNEBOARD_DATA_DIR: path.join(DIR, 'server', 'pglite'),
        DATABASE_URL: '',
        TUNEBOARD_ARTIFACT_DIR: path.join(DIR, 'server', 'artifacts'),
        TUNEBOARD_BASE_MODELS_FILE: baseModelsFile,
        TUNEBOARD_WORKER_TOKEN: WORKER_TOKEN,
        TUNEBOARD_RUNNER_CONCURRENCY: '1',
      },
      '/v1/system-check',
    );
    const log = fs.openSync(path.join(DIR, 'server', 'python-worker.log'), 'a');
    worker = python(
      [
        '-m',
        'tuneboard_worker',
        '--server-url',
        server.base,
        '--token',
        WORKER_TOKEN,
        '--device',
        'cpu',
        '--worker-id',
        `bench-worker:${process.pid}`,
        '--base-models',
        HF_BASE,
      ],
      ['ignore', log, log],
    );
    const stamp = `${Date.now()}`;
    const anon = new Api(server.base);
    const email = `worker-${stamp}@bench.test`;
    await anon.call('POST', '/v1/auth/sign-up', { email, password: 'bench-password', username: `worker${stamp}` });
    const { key } = await anon.call<{ key: string }>('POST', '/v1/auth/token', { email, password: 'bench-password' });
    const api = new Api(server.base, key);
    const results = [await measure(api, BUILTIN_BASE, 'Node', 60_000), await measure(api, HF_BASE, 'Python', 180_000)];
    console.log(`\njob created → training_started, server timestamps (${WARM_JOBS} warm jobs per worker):`);
    console.log(
      `${''.padEnd(8)} ${'cold'.padStart(9)} ${'warm median'.padStart(12)} ${'warm max'.padStart(9)}  (claim + load, median)`,
    );
    for (const r of results) {
      const totals = r.warm.map((w) => w.total);
      const claim = median(r.warm.map((w) => w.claim));
      console.log(
        `${r.label.padEnd(8)} ${`${r.cold.total.toFixed(0)} ms`.padStart(9)} ${`${median(totals).toFixed(0)} ms`.padStart(12)} ${`${Math.max(...totals).toFixed(0)} ms`.padStart(9)}  (${claim.toFixed(0)} + ${(median(totals) - claim).toFixed(0)} ms)`,
      );
    }
    for (const r of results) {
      const m = median(r.warm.map((w) => w.total));
      console.log(
        `job created → training_started (warm worker, ${r.label}): ${m.toFixed(0)} ms  goal < ${GOAL_MS} ms ${m < GOAL_MS ? 'PASS' : 'MISS'}`,
      );
    }
  } finally {
    if (worker && worker.exitCode === null) {
      worker.kill('SIGTERM');
      for (let i = 0; i < 100 && worker.exitCode === null; i++) await sleep(100);
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
    await server?.stop();
  }
}

async function main() {
  // Part 1 first: it builds the tiny Qwen3 that part 2's Python worker trains.
  const args = process.argv.slice(2);
  const throughput = spawnSync(
    'bash',
    [path.join(ROOT, 'scripts', 'worker-python.sh'), '-m', 'tuneboard_worker.bench', ...args],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        ...(process.env.TUNEBOARD_BENCH_PYTHON ? { TUNEBOARD_PYTHON: process.env.TUNEBOARD_BENCH_PYTHON } : {}),
      },
    },
  );
  if (throughput.status !== 0) process.exit(throughput.status ?? 1);
  await latencyBench();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
