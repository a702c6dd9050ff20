/**
 * `npm run bench:tinker [-- --quick]`: the Tinker API's cost (docs/tinker.md). forward_backward (cross_entropy, a
 * batch of ROWS × TOKENS) and optim_step sent through the API, as SDK 0.25 sends them, against the same operations in
 * one process on the same worker code, measured side by side in one run (rounds alternate between the two; medians).
 *
 * - Through the API: a production server (embedded database, and PostgreSQL too when DATABASE_URL is set: a scratch
 *   database, the run adds a user and models to it) and the Python worker as users run it (`python -m
 *   tuneboard_worker`, through tuneboard_worker/tinker_bench.py, which only reads the clock around its steps). The
 *   client here signs up, creates a session and a training client per base model, and for each operation submits it
 *   (forward_backward as a protobuf body, zstd-compressed when Python's zstandard module is there to compress it, as
 *   the SDK does) and holds retrieve_future open until the result (Accept: application/x-protobuf, as the SDK).
 * - In one process (tinker_bench.py reference): the worker's own training-client code (ClientPool, ops.forward,
 *   ops.optim_step) called directly on the payloads the server hands the worker, with the worker's defaults (CPU,
 *   float32, micro-batch budget, torch's threads), the same LoRA seed: both sides train the same adapter, so their
 *   losses agree round by round (checked).
 *
 * Goals (issue 40, item 8): at most 10 % overhead, and at most 20 ms added per operation between submit and result on
 * loopback. "Added" is measured two ways: the difference of the medians (side by side, which the compute's own noise
 * swamps when an operation takes seconds), and directly, per operation: submit → result minus the worker's own run of
 * it (the part the in-process reference also does). The added time is then decomposed with the client's clock, the
 * request rows' created/started/finished times (GET /v1/preview/models/{id}/tinker) and the worker's timestamps.
 *
 * Base models: a tiny Qwen3 and a SmolLM2-135M shape (hidden 576, 30 layers; 194M parameters with the Qwen3
 * tokenizer's 151,669-token vocabulary), random weights built by scripts/make-tiny-hf-model.py into
 * .data/bench-tinker-models (kept between runs), listed in the run's own base-models file.
 *
 * --quick (CI): the tiny model alone, 8 × 16 tokens, 3 rounds: a smoke test well within CI's 240 s (8 × 512 on the
 * tiny model takes tens of seconds per forward_backward on 2 cores: its 151,669 × 64 output layer). Exits non-zero on
 * any error; goals are printed, not enforced (a shared machine is too noisy to gate on).
 * Environment: TUNEBOARD_BENCH_PYTHON (a Python with torch, transformers, peft, httpx; else .venv-worker, the active
 * virtualenv, PATH), BENCH_ROUNDS, BENCH_TOKENS, BENCH_MODELS=tiny,135m, BENCH_PORT, BENCH_SERVER_LOG=1.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { config } from '../lib/config';
import { decodeForwardBackwardProto } from '../lib/tinker/forward-request';
import { ProtoReader, ProtoWriter } from '../lib/tinker/proto-wire';
import { forwardResultProto } from '../lib/tinker/results';
import type { ForwardPayload, ForwardResult } from '../lib/tinker/types';
import { httpRequest, type HttpReply } from './http-client';
import { percentile } from './percentile';
import { ensureBuild, startServer, type BenchServer } from './server';
import { findTorchPython } from './torch-python';

const ROOT = path.resolve(import.meta.dirname, '..');
const QUICK = process.argv.includes('--quick');
const PORT = Number(process.env.BENCH_PORT ?? 3250);
const ROWS = 8;
const TOKENS = Number(process.env.BENCH_TOKENS ?? (QUICK ? 16 : 512));
const WARMUP_ROUNDS = 1;
/**
 * The worker's --micro-batch-tokens on both sides: 2 rows of 512 per pass. Its default (4096) takes the whole batch in
 * one pass, whose 4096 × 151,669 logits alone are 2.5 GB: the 135M shape's forward_backward then went past 11 GB and
 * was killed for memory on the 23 GB machine this was written on.
 */
const MICRO_BATCH_TOKENS = Number(process.env.BENCH_MICRO_BATCH_TOKENS ?? 1024);
const WORKER_TOKEN = 'bench-tinker-worker-token';
const LORA = { rank: 32, seed: 0, train_mlp: true, train_attn: true, train_unembed: true };
const ADAM = { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 };
const GOAL_OVERHEAD = 0.1;
const GOAL_ADDED_MS = 20;
/** The SDK's session heartbeat; a session without one for TUNEBOARD_TINKER_SESSION_MINUTES ends. */
const HEARTBEAT_MS = 10_000;

interface BenchModel {
  key: 'tiny' | '135m';
  id: string;
  label: string;
  dir: string;
  make: string[];
  rounds: number;
}

const MODELS_DIR = path.join(ROOT, '.data', 'bench-tinker-models');
const MODELS: BenchModel[] = [
  {
    key: 'tiny',
    id: 'bench/tiny-qwen3',
    label: 'tiny Qwen3 (9.8M)',
    dir: path.join(MODELS_DIR, 'tiny-qwen3'),
    make: ['--arch', 'qwen3'],
    rounds: Number(process.env.BENCH_ROUNDS ?? (QUICK ? 3 : 5)),
  },
  {
    key: '135m',
    id: 'bench/smollm2-135m-shape',
    label: 'SmolLM2-135M shape (194M)',
    dir: path.join(MODELS_DIR, 'smollm2-135m-shape'),
    make: [
      '--arch',
      'smollm2',
      '--hidden',
      '576',
      '--layers',
      '30',
      '--heads',
      '9',
      '--kv-heads',
      '3',
      '--intermediate',
      '1536',
    ],
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  },
];

const now = () => performance.timeOrigin + performance.now(); // Unix epoch ms, the clock Python's time.time() reads
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// Python: the in-process reference and the worker

function findPython(): string {
  const venv = path.join(ROOT, '.venv-worker', 'bin', 'python');
  const candidates = [config.benchPython, fs.existsSync(venv) ? venv : undefined].filter(Boolean) as string[];
  const found =
    candidates[0] ??
    findTorchPython({ explicit: undefined, virtualEnv: config.virtualEnv, pathVar: config.searchPath })?.python;
  if (!found)
    throw new Error('no Python with torch: set TUNEBOARD_BENCH_PYTHON (a venv with workers/python installed)');
  const check = spawnSync(found, ['-c', 'import torch, transformers, peft, httpx'], { encoding: 'utf8' });
  if (check.status !== 0) {
    throw new Error(
      `${found} cannot import torch, transformers, peft and httpx: ${check.stderr.trim().split('\n').at(-1)}`,
    );
  }
  return found;
}

const pythonEnv = () => ({
  ...process.env,
  PYTHONPATH: [path.join(ROOT, 'workers', 'python'), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter),
  PYTHONUNBUFFERED: '1',
});

function makeModel(python: string, m: BenchModel): void {
  if (fs.existsSync(path.join(m.dir, 'config.json'))) return;
  console.log(`building ${m.label} in ${path.relative(ROOT, m.dir)} (kept for later runs)`);
  execFileSync(python, [path.join(ROOT, 'scripts', 'make-tiny-hf-model.py'), ...m.make, '--out', m.dir], {
    env: pythonEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** tinker_bench.py reference: one JSON line per command, one answer line each. */
class Reference {
  private lines: AsyncIterableIterator<string>;
  constructor(private child: ChildProcess) {
    this.lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }
  static start(python: string, log: fs.WriteStream): Reference {
    const child = spawn(python, ['-m', 'tuneboard_worker.tinker_bench', 'reference'], {
      cwd: ROOT,
      env: pythonEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr!.pipe(log);
    return new Reference(child);
  }
  async call<T = Record<string, unknown>>(msg: Record<string, unknown>): Promise<T> {
    this.child.stdin!.write(JSON.stringify(msg) + '\n');
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`the in-process reference exited (see its log) during ${String(msg.cmd)}`);
    const answer = JSON.parse(value) as T & { error?: string };
    if (answer.error && msg.cmd !== 'compress') throw new Error(`in-process ${String(msg.cmd)}: ${answer.error}`);
    return answer;
  }
  async stop(): Promise<void> {
    this.child.stdin!.end();
    await new Promise<void>((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

interface Worker {
  child: ChildProcess;
  timings: string;
  log: string;
  stop(): Promise<void>;
}

function startWorker(python: string, base: string, dir: string, baseModels: string[]): Worker {
  const timings = path.join(dir, 'worker-timings.jsonl');
  const log = path.join(dir, 'worker.log');
  const out = fs.openSync(log, 'a');
  const child = spawn(
    python,
    [
      '-m',
      'tuneboard_worker.tinker_bench',
      'worker',
      '--timings',
      timings,
      '--',
      '--server-url',
      base,
      '--token',
      WORKER_TOKEN,
      '--models-dir',
      MODELS_DIR,
      '--device',
      'cpu',
      '--worker-id',
      `bench-tinker:${process.pid}`,
      '--kinds',
      'tinker',
      '--base-models',
      baseModels.join(','),
      '--micro-batch-tokens',
      String(MICRO_BATCH_TOKENS),
    ],
    { cwd: ROOT, env: pythonEnv(), stdio: ['ignore', out, out] },
  );
  let exited = false;
  child.once('exit', () => (exited = true));
  return {
    child,
    timings,
    log,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      for (let i = 0; i < 100 && !exited; i++) await sleep(100);
      if (!exited) child.kill('SIGKILL');
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The client: HTTP as the SDK speaks it

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function request(
  base: string,
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: Uint8Array | string,
): Promise<HttpReply> {
  return httpRequest(`${base}${p}`, { agent, method, headers, body });
}

/** What every training call answers at once (docs/tinker.md §2.2). */
interface Future {
  request_id: string;
  model_id: string;
}

class Client {
  retrieves = 0;
  constructor(
    readonly base: string,
    private key: string,
  ) {}

  private headers(extra: Record<string, string> = {}) {
    return { 'x-api-key': `tml-${this.key}`, ...extra };
  }

  async json<T = Record<string, unknown>>(p: string, body: unknown, auth: 'tinker' | 'bearer' = 'tinker'): Promise<T> {
    const headers =
      auth === 'tinker'
        ? this.headers({ 'content-type': 'application/json' })
        : { ...(this.key ? { authorization: `Bearer ${this.key}` } : {}), 'content-type': 'application/json' };
    const r = await request(this.base, 'POST', p, headers, JSON.stringify(body));
    const text = r.bytes.toString('utf8');
    if (r.status < 200 || r.status >= 300) throw new Error(`${p}: ${r.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }

  async get<T>(p: string): Promise<T> {
    const r = await request(this.base, 'GET', p, { authorization: `Bearer ${this.key}` });
    const text = r.bytes.toString('utf8');
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  }

  async submitForwardBackward(body: Uint8Array, zstd: boolean): Promise<{ request_id: string }> {
    const r = await request(
      this.base,
      'POST',
      '/api/v1/forward_backward',
      this.headers({
        'content-type': 'application/x-protobuf',
        ...(zstd ? { 'content-encoding': 'zstd' } : {}),
      }),
      body,
    );
    const text = r.bytes.toString('utf8');
    if (r.status !== 200) throw new Error(`forward_backward: ${r.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  }

  /** retrieve_future until the result, as the SDK: again after each try_again. */
  async retrieve(requestId: string): Promise<{ proto?: Buffer; json?: Record<string, unknown>; tries: number }> {
    for (let tries = 1; ; tries++) {
      this.retrieves++;
      const r = await request(
        this.base,
        'POST',
        '/api/v1/retrieve_future',
        this.headers({ 'content-type': 'application/json', accept: 'application/x-protobuf' }),
        JSON.stringify({ request_id: requestId }),
      );
      if (r.status !== 200) throw new Error(`retrieve_future: ${r.status} ${r.bytes.toString('utf8').slice(0, 500)}`);
      if (r.type.includes('application/x-protobuf')) return { proto: r.bytes, tries };
      const body = JSON.parse(r.bytes.toString('utf8'));
      if (body.type === 'try_again') continue;
      if (body.error) throw new Error(`request ${requestId} failed (${body.category}): ${body.error}`);
      return { json: body, tries };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The batch: a ForwardBackwardRequest as SDK 0.25 writes it

/** Deterministic token ids (mulberry32), below both models' vocabulary. */
function tokenRows(seed: number): Int32Array[] {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return Array.from({ length: ROWS }, () =>
    Int32Array.from({ length: TOKENS + 1 }, () => Math.floor(next() * 150_000)),
  );
}

const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function forwardBackwardBody(modelId: string, seqId: number, rows: Int32Array[]): Uint8Array {
  const tensor = (dtype: number, data: Uint8Array, n: number) => {
    const t = new ProtoWriter();
    t.bytes(1, data);
    t.int(3, dtype);
    t.packedInts(4, [n]);
    return t;
  };
  const entry = (name: string, t: ProtoWriter) => {
    const e = new ProtoWriter();
    e.string(1, name);
    e.message(2, t);
    return e;
  };
  const w = new ProtoWriter();
  w.string(1, modelId);
  w.int(2, seqId);
  for (const row of rows) {
    const n = row.length - 1;
    const datum = new ProtoWriter();
    const text = new ProtoWriter();
    text.bytes(1, bytesOf(row.slice(0, n)));
    const chunk = new ProtoWriter();
    chunk.message(1, text);
    datum.message(1, chunk);
    // DType: FLOAT32 = 1, INT64 = 2 (lib/tinker/tinker_public.proto).
    datum.message(2, entry('target_tokens', tensor(2, bytesOf(BigInt64Array.from(row.slice(1), (v) => BigInt(v))), n)));
    datum.message(2, entry('weights', tensor(1, bytesOf(new Float32Array(n).fill(1)), n)));
    w.message(3, datum);
  }
  w.string(4, 'cross_entropy');
  return w.finish();
}

/** loss:sum and the number of logprobs of a ForwardBackwardOutput. */
function readForwardOutput(bytes: Uint8Array): { loss: number; logprobs: number } {
  const r = ProtoReader.of(bytes, 'ForwardBackwardOutput');
  let loss = NaN;
  let logprobs = 0;
  while (r.next()) {
    if (r.field === 2) {
      const record = r.message('loss_fn_outputs');
      while (record.next()) {
        if (record.field !== 2) {
          record.skip();
          continue;
        }
        const e = record.message('fields');
        let name = '';
        let size = 0;
        while (e.next()) {
          if (e.field === 1) name = e.string('key');
          else if (e.field === 2) {
            const t = e.message('value');
            while (t.next()) {
              if (t.field === 1) size = t.bytes('data').length;
              else t.skip();
            }
          } else e.skip();
        }
        if (name === 'logprobs') logprobs += size / 4;
      }
    } else if (r.field === 3) {
      const e = r.message('metrics');
      let name = '';
      let value = NaN;
      while (e.next()) {
        if (e.field === 1) name = e.string('key');
        else if (e.field === 2) value = e.double('value');
        else e.skip();
      }
      if (name === 'loss:sum') loss = value;
    } else r.skip();
  }
  return { loss, logprobs };
}

// ---------------------------------------------------------------------------------------------------------------
// One backend: a server, a worker, the reference, every model's rounds

type Op = 'forward_backward' | 'optim_step';
const OPS: Op[] = ['forward_backward', 'optim_step'];

interface ApiOp {
  op: Op;
  round: number;
  requestId: string;
  submitted: number; // c0: the submit is sent
  accepted: number; // c1: its request_id is back
  done: number; // c2: the result is in
  tries: number;
  loss?: number;
}

interface WorkerRecord {
  request_id: string;
  poll_sent?: number;
  poll_answered?: number;
  poll_parsed?: number;
  run_start?: number;
  run_end?: number;
  decode_start?: number;
  decode_end?: number;
  post_start?: number;
  post_end?: number;
}

interface ServerRow {
  id: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

interface ModelResult {
  backend: string;
  model: BenchModel;
  api: ApiOp[];
  reference: { op: Op; round: number; ms: number; loss?: number }[];
  workerRecords: Map<string, WorkerRecord>;
  serverRows: Map<string, ServerRow>;
  bodyBytes: number;
  sentBytes: number;
  resultBytes: number;
  codec: { decodeMs: number; encodeMs: number };
  trainable: number;
  /** The server's CPU time per round (one forward_backward and one optim_step), mean over the measured rounds. */
  serverCpuMs: number;
}

async function runBackend(
  label: string,
  env: Record<string, string>,
  models: BenchModel[],
  python: string,
  runDir: string,
): Promise<{ results: ModelResult[]; threads: { worker: number; reference: number }; zstd: boolean }> {
  const dir = path.join(runDir, label.toLowerCase());
  fs.mkdirSync(dir, { recursive: true });
  const baseModelsFile = path.join(dir, 'base-models.json');
  fs.writeFileSync(
    baseModelsFile,
    JSON.stringify({ models: models.map((m) => ({ id: m.id, backend: 'hf', path: m.dir, description: m.label })) }),
  );
  const referenceLog = fs.createWriteStream(path.join(dir, 'reference.log'));
  // Torch loads in the reference while the server starts.
  const reference = Reference.start(python, referenceLog);
  let server: BenchServer | undefined;
  let worker: Worker | undefined;
  try {
    server = await startServer(
      PORT,
      {
        ...env,
        TUNEBOARD_ARTIFACT_DIR: path.join(dir, 'artifacts'),
        TUNEBOARD_BASE_MODELS_FILE: baseModelsFile,
        TUNEBOARD_WORKER_TOKEN: WORKER_TOKEN,
        TUNEBOARD_RUNNER_CONCURRENCY: '0',
      },
      '/v1/system-check',
    );
    worker = startWorker(
      python,
      server.base,
      dir,
      models.map((m) => m.id),
    );
    const stamp = `${Date.now()}`;
    const email = `tinker-${stamp}@bench.test`;
    const anon = new Client(server.base, '');
    await anon.json('/v1/auth/sign-up', { email, password: 'bench-password', username: `tinker${stamp}` }, 'bearer');
    const { key } = await anon.json<{ key: string }>('/v1/auth/token', { email, password: 'bench-password' }, 'bearer');
    const client = new Client(server.base, key);
    const session = await client.json<{ session_id: string }>('/api/v1/create_session', {
      tags: ['bench'],
      user_metadata: null,
      sdk_version: '0.25.0',
    });
    const heartbeat = setInterval(
      () =>
        void client
          .json('/api/v1/session_heartbeat', { session_id: session.session_id })
          .catch((err) => console.error(`[bench] session heartbeat: ${(err as Error).message}`)),
      HEARTBEAT_MS,
    );
    let zstd = false;
    let threads = { worker: 0, reference: 0 };
    const results: ModelResult[] = [];
    try {
      for (const [i, model] of models.entries()) {
        const started = Date.now();
        const created = await client.json<Future>('/api/v1/create_model', {
          session_id: session.session_id,
          model_seq_id: i,
          base_model: model.id,
          user_metadata: null,
          lora_config: LORA,
        });
        const loaded = await reference.call<{ threads: number; trainable_parameters: number }>({
          cmd: 'load',
          base_model: model.id,
          path: model.dir,
          lora: { ...LORA, alpha: 32 },
          micro_batch_tokens: MICRO_BATCH_TOKENS,
        });
        await client.retrieve(created.request_id);
        console.log(
          `[${label}] ${model.label}: training client ready on the worker and in process in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        threads = { ...threads, reference: loaded.threads };
        const result = await runModel(label, model, client, created.model_id, reference, server.cpuSeconds);
        result.trainable = loaded.trainable_parameters;
        zstd = result.sentBytes !== result.bodyBytes;
        const unloaded = await client.json<Future>('/api/v1/unload_model', { model_id: created.model_id });
        await client.retrieve(unloaded.request_id);
        await reference.call({ cmd: 'free' });
        const rows = (await client.get<{ requests: ServerRow[] }>(`/v1/preview/models/${created.model_id}/tinker`))
          .requests;
        result.serverRows = new Map(rows.map((r) => [r.id, r]));
        results.push(result);
      }
    } finally {
      clearInterval(heartbeat);
    }
    await worker.stop();
    const lines = fs.existsSync(worker.timings) ? fs.readFileSync(worker.timings, 'utf8').trim().split('\n') : [];
    const records = new Map<string, WorkerRecord>();
    for (const line of lines) {
      const rec = JSON.parse(line) as WorkerRecord & { threads?: number };
      if (rec.threads !== undefined) threads.worker = rec.threads;
      else records.set(rec.request_id, rec);
    }
    for (const r of results) r.workerRecords = records;
    return { results, threads, zstd };
  } catch (err) {
    if (worker && fs.existsSync(worker.log)) {
      console.error(`--- worker log (end) ---\n${fs.readFileSync(worker.log, 'utf8').slice(-3000)}`);
    }
    throw err;
  } finally {
    await worker?.stop();
    await reference.stop();
    referenceLog.end();
    await server?.stop();
  }
}

async function runModel(
  label: string,
  model: BenchModel,
  client: Client,
  modelId: string,
  reference: Reference,
  serverCpuSeconds: () => number,
): Promise<ModelResult> {
  const rows = tokenRows(1);
  const total = WARMUP_ROUNDS + model.rounds;
  // Every body up front (their seq_ids differ), compressed off the clock.
  const bodies = Array.from({ length: total }, (_, r) => forwardBackwardBody(modelId, 2 * r + 1, rows));
  const sent: Uint8Array[] = [];
  let zstd = true;
  for (const body of bodies) {
    const c = zstd
      ? await reference.call<{ data?: string; error?: string }>({
          cmd: 'compress',
          data: Buffer.from(body).toString('base64'),
        })
      : {};
    if (c.data) sent.push(new Uint8Array(Buffer.from(c.data, 'base64')));
    else {
      zstd = false;
      sent.push(body);
    }
  }
  // The payload the server hands the worker, from the server's own decoder: what the reference runs.
  const payload: ForwardPayload = decodeForwardBackwardProto(bodies[0]).payload;
  await reference.call({ cmd: 'payloads', forward_backward: payload, optim_step: { adam_params: ADAM } });

  const api: ApiOp[] = [];
  const ref: ModelResult['reference'] = [];
  let resultBytes = 0;
  let sampleResult: Buffer | undefined;
  const serverCpuMs: number[] = [];
  const apiRound = async (r: number) => {
    const cpu = serverCpuSeconds();
    let c0 = now();
    const fb = await client.submitForwardBackward(sent[r], zstd);
    let c1 = now();
    const fbOut = await client.retrieve(fb.request_id);
    let c2 = now();
    if (!fbOut.proto) throw new Error(`forward_backward answered JSON, not protobuf: ${JSON.stringify(fbOut.json)}`);
    const out = readForwardOutput(fbOut.proto);
    if (out.logprobs !== ROWS * TOKENS || !Number.isFinite(out.loss)) {
      throw new Error(
        `forward_backward result: ${out.logprobs} logprobs (expected ${ROWS * TOKENS}), loss ${out.loss}`,
      );
    }
    resultBytes = fbOut.proto.length;
    sampleResult = fbOut.proto;
    api.push({
      op: 'forward_backward',
      round: r,
      requestId: fb.request_id,
      submitted: c0,
      accepted: c1,
      done: c2,
      tries: fbOut.tries,
      loss: out.loss,
    });
    c0 = now();
    const opt = await client.json<Future>('/api/v1/optim_step', {
      model_id: modelId,
      seq_id: 2 * r + 2,
      adam_params: ADAM,
    });
    c1 = now();
    const optOut = await client.retrieve(opt.request_id);
    c2 = now();
    if (typeof (optOut.json?.metrics as Record<string, unknown> | undefined)?.['optim/step'] !== 'number') {
      throw new Error(`optim_step result: ${JSON.stringify(optOut.json)}`);
    }
    api.push({
      op: 'optim_step',
      round: r,
      requestId: opt.request_id,
      submitted: c0,
      accepted: c1,
      done: c2,
      tries: optOut.tries,
    });
    if (r >= WARMUP_ROUNDS) serverCpuMs.push((serverCpuSeconds() - cpu) * 1000);
  };
  const refRound = async (r: number) => {
    const a = await reference.call<{ forward_backward_ms: number; optim_step_ms: number; loss: number }>({
      cmd: 'round',
    });
    ref.push({ op: 'forward_backward', round: r, ms: a.forward_backward_ms, loss: a.loss });
    ref.push({ op: 'optim_step', round: r, ms: a.optim_step_ms });
  };
  for (let r = 0; r < total; r++) {
    const t = Date.now();
    // Alternating which side goes first cancels a drift in the machine's load.
    if (r % 2 === 0) {
      await apiRound(r);
      await refRound(r);
    } else {
      await refRound(r);
      await apiRound(r);
    }
    const fbApi = api.find((o) => o.round === r && o.op === 'forward_backward')!;
    const fbRef = ref.find((o) => o.round === r && o.op === 'forward_backward')!;
    console.log(
      `[${label}] ${model.label} round ${r + 1}/${total}${r < WARMUP_ROUNDS ? ' (warm-up)' : ''}: forward_backward API ${(fbApi.done - fbApi.submitted).toFixed(0)} ms, in process ${fbRef.ms.toFixed(0)} ms; ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }

  // The codec's share, in this process: the server decodes the body and encodes the result the same way.
  const decodeMs = timeIt(() => decodeForwardBackwardProto(sent[0], zstd ? 'zstd' : null));
  const result = toForwardResult(sampleResult!);
  const encodeMs = timeIt(() => forwardResultProto(result));
  return {
    backend: label,
    model,
    api,
    reference: ref,
    workerRecords: new Map(),
    serverRows: new Map(),
    bodyBytes: bodies[0].length,
    sentBytes: sent[0].length,
    resultBytes,
    codec: { decodeMs, encodeMs },
    trainable: 0,
    serverCpuMs: serverCpuMs.reduce((a, b) => a + b, 0) / Math.max(1, serverCpuMs.length),
  };
}

/** Median ms of a function, warmed up first (the server runs it on every request: its code is compiled). */
function timeIt(fn: () => unknown): number {
  for (let i = 0; i < 10; i++) fn();
  const times = Array.from({ length: 15 }, () => {
    const t = performance.now();
    fn();
    return performance.now() - t;
  });
  return percentile(times, 50);
}

/** A ForwardResult shaped like the one the worker answered (logprobs per datum), to time the server's encoder. */
function toForwardResult(_proto: Buffer): ForwardResult {
  const values = new Float32Array(TOKENS).fill(-11.9);
  const data = Buffer.from(values.buffer).toString('base64');
  return {
    loss_fn_outputs: Array.from({ length: ROWS }, () => ({ logprobs: { dtype: 'float32', shape: [TOKENS], data } })),
    metrics: { 'loss:sum': 1 },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const med = (xs: number[]) => percentile(xs, 50);
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : 'n/a');
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');
const iso = (s: string | null | undefined) => (s ? Date.parse(s) : NaN);
/** The worker writes seconds; everything else here is ms. */
const ms = (s: number | undefined) => (s === undefined ? NaN : s * 1000);

interface Decomposed {
  total: number;
  run: number;
  decode: number;
  toInsert: number;
  toTaken: number;
  toWorker: number;
  /** Of toWorker: the poll's answer on the worker (the server's queries, JSON, HTTP), then parsing and dispatch. */
  pollAnswer: number;
  dispatch: number;
  toRecorded: number;
  toClient: number;
  post: number;
  added: number;
}

function decompose(o: ApiOp, w: WorkerRecord | undefined, s: ServerRow | undefined): Decomposed {
  const created = iso(s?.created_at);
  const started = iso(s?.started_at);
  const finished = iso(s?.finished_at);
  const run = ms(w?.run_end) - ms(w?.run_start);
  const total = o.done - o.submitted;
  return {
    total,
    run,
    decode: ms(w?.decode_end) - ms(w?.decode_start),
    toInsert: created - o.submitted,
    toTaken: started - created,
    toWorker: ms(w?.run_start) - started,
    pollAnswer: ms(w?.poll_answered) - started,
    dispatch: ms(w?.run_start) - ms(w?.poll_answered),
    toRecorded: finished - ms(w?.run_end),
    toClient: o.done - finished,
    post: ms(w?.post_end) - ms(w?.post_start),
    added: total - run,
  };
}

function report(results: ModelResult[], meta: { threads: { worker: number; reference: number }; zstd: boolean }) {
  let misses = 0;
  console.log(
    `\nTinker API against the same operations in one process: ${ROWS} × ${TOKENS} tokens, cross_entropy, LoRA rank ${LORA.rank} (attention, MLP, output head), AdamW, micro-batches of ${MICRO_BATCH_TOKENS} tokens; ` +
      `medians of the measured rounds (${WARMUP_ROUNDS} warm-up round per model not counted)\n`,
  );
  console.log(
    '| backend | model | operation | rounds | API ms | in process ms | overhead (goal ≤ 10 %) | added ms, side by side | added ms, measured (goal ≤ 20 ms) |',
  );
  console.log('|---|---|---|---:|---:|---:|---|---:|---|');
  for (const r of results) {
    for (const op of OPS) {
      const api = r.api.filter((o) => o.op === op && o.round >= WARMUP_ROUNDS);
      const ref = r.reference.filter((o) => o.op === op && o.round >= WARMUP_ROUNDS);
      const apiMs = med(api.map((o) => o.done - o.submitted));
      const refMs = med(ref.map((o) => o.ms));
      const added = med(
        api.map((o) => decompose(o, r.workerRecords.get(o.requestId), r.serverRows.get(o.requestId)).added),
      );
      const overhead = (apiMs - refMs) / refMs;
      const overheadOk = overhead <= GOAL_OVERHEAD;
      const addedOk = added <= GOAL_ADDED_MS;
      if (!overheadOk) misses++;
      if (!addedOk) misses++;
      console.log(
        `| ${r.backend} | ${r.model.label} | ${op} | ${api.length} | ${f1(apiMs)} | ${f1(refMs)} | ${f1(overhead * 100)} % ${mark(overheadOk)} | ${f1(apiMs - refMs)} | ${f1(added)} ${mark(addedOk)} |`,
      );
    }
  }
  console.log(
    '\n"added ms, measured": per operation, submit → result on the client minus the worker\'s own run of it (ops.forward / ' +
      'ops.optim_step, what the in-process side times), so the compute\'s noise cancels; "side by side": the difference of ' +
      'the two medians, which that noise swamps when an operation takes seconds.',
  );

  console.log(
    "\nWhere the added time goes (medians, ms; clocks: the client, the request row's created/started/finished, the worker's)\n",
  );
  console.log(
    '| backend | model | operation | submit → row inserted | inserted → poll takes it | taken → worker runs it (poll answer + parse, dispatch) | worker run (of it: decoding) | run end → result recorded | recorded → client has it | result post round trip | total | retrieve calls |',
  );
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    for (const op of OPS) {
      const api = r.api.filter((o) => o.op === op && o.round >= WARMUP_ROUNDS);
      const d = api.map((o) => decompose(o, r.workerRecords.get(o.requestId), r.serverRows.get(o.requestId)));
      const m = (k: keyof Decomposed) => med(d.map((x) => x[k]));
      console.log(
        `| ${r.backend} | ${r.model.label} | ${op} | ${f1(m('toInsert'))} | ${f1(m('toTaken'))} | ${f1(m('toWorker'))} (${f1(m('pollAnswer'))} + ${f1(m('dispatch'))}) | ${f0(m('run'))} (${f1(m('decode'))}) | ${f1(m('toRecorded'))} | ${f1(m('toClient'))} | ${f1(m('post'))} | ${f0(m('total'))} | ${api.reduce((n, o) => n + o.tries, 0)} |`,
      );
    }
  }
  console.log(
    "\nsubmit → row inserted: HTTP, auth, reading and decoding the body, the checks, up to the insert's transaction; " +
      "inserted → poll takes it: the commit, the wake-up and the worker's long poll waking; taken → worker runs it: the " +
      "poll's queries, its answer (JSON) over HTTP, parsing it in Python; run end → result recorded: the answer's JSON " +
      'over HTTP, its checks, the locks; recorded → client has it: the rest of that transaction, the wake-up of ' +
      'retrieve_future, its read and its protobuf answer. Server times have millisecond resolution.',
  );
  for (const r of results) {
    const refLoss = r.reference.filter((o) => o.op === 'forward_backward').map((o) => o.loss!);
    const apiLoss = r.api.filter((o) => o.op === 'forward_backward').map((o) => o.loss!);
    const diff = Math.max(...apiLoss.map((l, i) => Math.abs(l - refLoss[i]) / Math.abs(refLoss[i])));
    console.log(
      `\n${r.backend}, ${r.model.label}: ${r.trainable.toLocaleString('en')} trainable parameters; forward_backward body ${r.bodyBytes} bytes of protobuf` +
        `${r.sentBytes !== r.bodyBytes ? `, ${r.sentBytes} sent zstd-compressed` : ' (sent uncompressed)'}, result ${r.resultBytes} bytes; ` +
        `the server's codec in this process: body decoded in ${f1(r.codec.decodeMs)} ms, result encoded in ${f1(r.codec.encodeMs)} ms; ` +
        `the server's CPU time per round (forward_backward + optim_step, every thread): ${f0(r.serverCpuMs)} ms; ` +
        `loss:sum through the API and in process differ by at most ${diff.toExponential(1)} (relative) over ${apiLoss.length} rounds`,
    );
    if (!(diff < 1e-3)) {
      console.log(`  losses differ: API ${apiLoss.join(', ')}; in process ${refLoss.join(', ')}`);
    }
  }
  console.log(
    `\ntorch threads: worker ${meta.threads.worker}, in process ${meta.threads.reference}; forward_backward bodies ${meta.zstd ? 'zstd-compressed (level 3, Python zstandard)' : 'uncompressed (no zstandard module to compress them)'}`,
  );
  return misses;
}

async function main() {
  const started = Date.now();
  ensureBuild();
  const chosen = (process.env.BENCH_MODELS ?? (QUICK ? 'tiny' : 'tiny,135m')).split(',');
  const models = MODELS.filter((m) => chosen.includes(m.key));
  const python = findPython();
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  console.log(
    `node ${process.version}, ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; ` +
      `Python ${python}; load average ${load()} (other work on the machine slows both sides)`,
  );
  fs.mkdirSync(MODELS_DIR, { recursive: true });
  for (const m of models) makeModel(python, m);
  const runDir = path.join(ROOT, '.data', 'bench-tinker');
  fs.rmSync(runDir, { recursive: true, force: true });
  const all: ModelResult[] = [];
  let meta = { threads: { worker: 0, reference: 0 }, zstd: false };
  const postgres = process.env.DATABASE_URL;
  // --quick runs one backend, to stay well inside CI's 240 s: PostgreSQL where there is one (CI's; it wakes the poll
  // and retrieve_future through LISTEN/NOTIFY, the path several server processes take), else the embedded database.
  if (!(QUICK && postgres)) {
    const pglite = await runBackend(
      'PGlite',
      { TUNEBOARD_DATA_DIR: path.join(runDir, 'pglite', 'db'), DATABASE_URL: '' },
      models,
      python,
      runDir,
    );
    all.push(...pglite.results);
    meta = pglite;
  }
  if (postgres) {
    // The tiny model: the database's share does not depend on the model.
    const pg = await runBackend('PostgreSQL', { DATABASE_URL: postgres }, models.slice(0, 1), python, runDir);
    all.push(...pg.results);
    if (QUICK) meta = pg;
  } else {
    console.log('DATABASE_URL not set: PostgreSQL skipped (set it to a scratch database to include it)');
  }
  agent.destroy();
  // Every operation's clock readings, for a closer look: client (ms), server rows (ISO), worker (s), in process (ms).
  fs.writeFileSync(
    path.join(runDir, 'timings.json'),
    JSON.stringify(
      all.map((r) => ({
        backend: r.backend,
        model: r.model.id,
        api: r.api.map((o) => ({
          ...o,
          server: r.serverRows.get(o.requestId),
          worker: r.workerRecords.get(o.requestId),
        })),
        reference: r.reference,
      })),
      null,
      1,
    ),
  );
  const misses = report(all, meta);
  console.log(
    `\nload average after: ${load()}; ${((Date.now() - started) / 1000).toFixed(0)} s in all; ${misses} goals missed (reported, not enforced)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
