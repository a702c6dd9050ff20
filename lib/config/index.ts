import os from 'node:os';
import path from 'node:path';
import { defaultThreadCount, envSchema, SETTING_NAMES, type LOG_LEVELS } from './settings';

/**
 * Server and worker configuration from the environment, parsed through one zod schema (settings.ts).
 * Every knob has an embedded default so that a fresh clone runs with nothing set; a bad value is a
 * start-up error naming the variable (`assertValidConfig`, called by lib/runtime/server-start.ts and the worker).
 *
 * Outside production the parse is cached per set of values, not once per process: tests change a variable and
 * expect the next request to see it. In production it is parsed once.
 */

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, unknown>;
const MiB = 1024 * 1024;
const mib = (value: unknown, fallback: number) =>
  Math.max(1, Math.floor(((value as number | undefined) ?? fallback) * MiB));
const text = (value: unknown) => value as string | undefined;
const num = (value: unknown, fallback: number) => (value as number | undefined) ?? fallback;

function resolve(raw: Raw, env: NodeJS.ProcessEnv) {
  const port = num(raw.PORT, 3000);
  return {
    port,
    databaseUrl: text(raw.DATABASE_URL),
    databasePoolSize: num(raw.TUNEBOARD_DB_POOL_SIZE, 10),
    /** Prepared statements kept per database connection (lib/db/statement-cache.ts); 0 turns them off. */
    dbStatementCache: num(raw.TUNEBOARD_DB_STATEMENT_CACHE, 500),
    /** PGlite data directory, or `memory://` for an in-memory database. */
    dataDir: ((dir: string) => (dir.startsWith('memory://') ? dir : path.resolve(/*turbopackIgnore: true*/ dir)))(
      text(raw.TUNEBOARD_DATA_DIR) ?? path.join('.data', 'pglite'),
    ),
    artifactDir: path.resolve(
      /*turbopackIgnore: true*/ text(raw.TUNEBOARD_ARTIFACT_DIR) ?? path.join('.data', 'artifacts'),
    ),
    /** Body limit of training-job and /log routes, which carry per-token logprobs (at least 256 MiB by default). */
    largeBodyLimitBytes: mib(raw.TUNEBOARD_MAX_BODY_MB, 256),
    /** Body limit of every other JSON route. */
    smallBodyLimitBytes: mib(raw.TUNEBOARD_MAX_SMALL_BODY_MB, 8),
    maxCheckpointBytes: num(raw.TUNEBOARD_MAX_CHECKPOINT_MB, 4096) * MiB,
    /** Longest line of an uploaded dataset (JSONL): each line is parsed whole, on the dataset thread. */
    maxDatasetLineBytes: mib(raw.TUNEBOARD_MAX_DATASET_LINE_MB, 8),
    baseModelsFile: path.resolve(
      /*turbopackIgnore: true*/ text(raw.TUNEBOARD_BASE_MODELS_FILE) ?? path.join('config', 'base-models.json'),
    ),
    /** Where relative base-model paths (built-in weights files, Hugging Face directories) resolve. */
    baseModelsDir: path.resolve(/*turbopackIgnore: true*/ text(raw.TUNEBOARD_BASE_MODELS_DIR) ?? process.cwd()),
    /** huggingface_hub's settings, for base models the server downloads from the Hub (lib/services/hub-models.ts). */
    hub: ((home: string) => ({
      home,
      cache: path.resolve(/*turbopackIgnore: true*/ text(raw.HF_HUB_CACHE) ?? path.join(home, 'hub')),
      endpoint: (text(raw.HF_ENDPOINT) ?? 'https://huggingface.co').replace(/\/+$/, ''),
      token: text(raw.HF_TOKEN),
      offline: ['1', 'on', 'yes', 'true'].includes((text(raw.HF_HUB_OFFLINE) ?? '').trim().toLowerCase()),
    }))(path.resolve(/*turbopackIgnore: true*/ text(raw.HF_HOME) ?? path.join(os.homedir(), '.cache', 'huggingface'))),
    upstream: text(raw.TUNEBOARD_UPSTREAM_URL)
      ? { url: text(raw.TUNEBOARD_UPSTREAM_URL)!, apiKey: text(raw.TUNEBOARD_UPSTREAM_API_KEY) }
      : undefined,
    /** The vLLM (OpenAI-compatible) server that serves `upstream` and `serve: "vllm"` base models: its /v1 URL. */
    upstreamUrl: text(raw.TUNEBOARD_UPSTREAM_URL)?.replace(/\/+$/, ''),
    upstreamApiKey: text(raw.TUNEBOARD_UPSTREAM_API_KEY),
    /**
     * A folder both Tuneboard and the vLLM server can read, where checkpoints' LoRA adapters are written
     * before vLLM is asked to load them. Unset: checkpoints of vLLM-served models cannot be served.
     */
    vllmAdapterDir: text(raw.TUNEBOARD_VLLM_ADAPTER_DIR)
      ? path.resolve(/*turbopackIgnore: true*/ text(raw.TUNEBOARD_VLLM_ADAPTER_DIR)!)
      : undefined,
    /** The same folder as the vLLM server sees it, when it is mounted at another path there (default: the same). */
    vllmAdapterDirOnServer:
      text(raw.TUNEBOARD_VLLM_ADAPTER_DIR_ON_SERVER) ??
      (text(raw.TUNEBOARD_VLLM_ADAPTER_DIR)
        ? path.resolve(/*turbopackIgnore: true*/ text(raw.TUNEBOARD_VLLM_ADAPTER_DIR)!)
        : undefined),
    /** vLLM's `--max-loras`: how many adapters Tuneboard keeps loaded before unloading the least recently used. */
    vllmMaxLoras: num(raw.TUNEBOARD_VLLM_MAX_LORAS, 4),
    /** Wrong passwords within 15 minutes after which an account's attempts must wait (1 s, doubling per failure). */
    loginAccountAttempts: num(raw.TUNEBOARD_LOGIN_ACCOUNT_ATTEMPTS, 5),
    /** The same for one client address, over all accounts (generous: many users may share one address). */
    loginAddressAttempts: num(raw.TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS, 30),
    /** Reverse proxies whose X-Forwarded-For entries are believed (lib/api/client-address.ts); 0: the socket's address. */
    trustedProxies: num(raw.TUNEBOARD_TRUSTED_PROXIES, 0),
    /** How long a small body may take to arrive, and a streamed one may stall (lib/api/fast-path.ts): then 408. */
    bodyTimeoutMs: num(raw.TUNEBOARD_BODY_TIMEOUT_SECONDS, 15) * 1000,
    /**
     * The embedded database's WebAssembly heap never shrinks; past this size (after a burst of large rows) its
     * thread is restarted while idle, which gives the memory back. Not for `memory://` databases.
     */
    pgliteRecycleHeapBytes: mib(raw.TUNEBOARD_PGLITE_RECYCLE_MB, 512),
    /**
     * Queries sent to the embedded database's thread at once outside a transaction (lib/db/pglite-connection.ts):
     * more keep its thread busy while the request thread reads answers; 1 sends one at a time.
     */
    pglitePipeline: num(raw.TUNEBOARD_PGLITE_PIPELINE, 4),
    /** Milliseconds of request starts and embedded-database answers per event-loop turn (lib/runtime/turns.ts). */
    requestWorkPerTurnMs: num(raw.TUNEBOARD_REQUEST_WORK_PER_TURN_MS, 2),
    /** Seconds between checks for embedded-database tables whose planner statistics are stale (0: never). */
    pgliteAnalyzeSeconds: num(raw.TUNEBOARD_PGLITE_ANALYZE_SECONDS, 60),
    /** A PGlite dump an in-memory database starts from (tests: one migrated dump instead of a new database per file). */
    pgliteSnapshot: text(raw.TUNEBOARD_PGLITE_SNAPSHOT),
    /** Nice value the server's helper threads take (lib/config/thread-priority.ts); 0 leaves them alone. */
    threadNice: Math.min(num(raw.TUNEBOARD_THREAD_NICE, 5), 19),
    /** Requests with bodies past the small limit that one process handles at once; more get 429 + Retry-After. */
    maxLargeRequests: num(raw.TUNEBOARD_MAX_LARGE_REQUESTS, 2),
    /** Largest structured-output constraint (its JSON) the built-in engine compiles; compile time grows with it. */
    maxStructuredOutputBytes: Math.max(1, Math.floor(num(raw.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB, 512) * 1024)),
    /** bench:train only: a Python interpreter with PyTorch for the anchor (else a venv, PATH, /usr/bin/python3). */
    benchPython: text(raw.TUNEBOARD_BENCH_PYTHON),
    /** The active virtual environment (`source venv/bin/activate`), searched for PyTorch by bench:train. */
    virtualEnv: env.VIRTUAL_ENV || undefined,
    searchPath: env.PATH ?? '',
    inferenceThreads: num(raw.TUNEBOARD_INFERENCE_THREADS, defaultThreadCount()),
    modelCacheBytes: num(raw.TUNEBOARD_MODEL_CACHE_MB, 512) * MiB,
    maxLogprobs: num(raw.TUNEBOARD_MAX_LOGPROBS, 20),
    /** lib/api/fast-path.ts serves /v1 ahead of Next.js (production servers only). */
    fastRoutes: raw.TUNEBOARD_FAST_ROUTES !== '0',
    runnerConcurrency: num(raw.TUNEBOARD_RUNNER_CONCURRENCY, 1),
    trainThreads: num(raw.TUNEBOARD_TRAIN_THREADS, defaultThreadCount()),
    workerToken: text(raw.TUNEBOARD_WORKER_TOKEN),
    serverUrl: text(raw.TUNEBOARD_SERVER_URL) ?? `http://127.0.0.1:${port}`,
    workerId: text(raw.TUNEBOARD_WORKER_ID) ?? `${os.hostname()}:${process.pid}`,
    jobLeaseSeconds: num(raw.TUNEBOARD_JOB_LEASE_SECONDS, 60),
    jobIdleMs: num(raw.TUNEBOARD_JOB_IDLE_MINUTES, 30) * 60_000,
    /** How long retrieve_future waits for a Tinker request to finish before answering try_again (docs/tinker.md §2.2). */
    tinkerWaitMs: num(raw.TUNEBOARD_TINKER_WAIT_SECONDS, 20) * 1000,
    tinkerSessionMs: num(raw.TUNEBOARD_TINKER_SESSION_MINUTES, 3) * 60_000,
    s3:
      text(raw.TUNEBOARD_S3_ENDPOINT) && text(raw.TUNEBOARD_S3_BUCKET)
        ? {
            endpoint: text(raw.TUNEBOARD_S3_ENDPOINT)!,
            bucket: text(raw.TUNEBOARD_S3_BUCKET)!,
            region: text(raw.TUNEBOARD_S3_REGION) ?? 'us-east-1',
            accessKeyId: text(raw.TUNEBOARD_S3_ACCESS_KEY_ID) ?? '',
            secretAccessKey: text(raw.TUNEBOARD_S3_SECRET_ACCESS_KEY) ?? '',
            prefix: text(raw.TUNEBOARD_S3_PREFIX),
          }
        : undefined,
    logLevel: (text(raw.TUNEBOARD_LOG_LEVEL) ?? 'info') as (typeof LOG_LEVELS)[number],
    isProduction: env.NODE_ENV === 'production',
  };
}

export type Config = ReturnType<typeof resolve>;

let cached: { key: string; value: Config; production: boolean } | undefined;

/** Parses the environment (cached while the values stay the same); throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // A production server's environment is fixed once it has started, and the key below reads every variable from
  // process.env (a slow native lookup each) on every `config.x`: a chat request paid about 0.1 ms for it.
  if (env === process.env && cached?.production) return cached.value;
  const key = `${env.NODE_ENV}\u0000${SETTING_NAMES.map((n) => env[n] ?? '\u0001').join('\u0000')}`;
  if (cached?.key === key) return cached.value;
  const parsed = envSchema.safeParse(Object.fromEntries(SETTING_NAMES.map((n) => [n, env[n]])));
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0]);
        return `${name} ${issue.message.replace(/^Invalid option: expected one of /, 'must be one of ')}, got ${JSON.stringify(env[name])}`;
      }),
    );
  }
  const value = resolve(parsed.data as Raw, env);
  if (env === process.env) cached = { key, value, production: value.isProduction };
  return value;
}

/** Start-up check: fails fast with every bad variable named instead of at the first request that reads one. */
export function assertValidConfig(): Config {
  return loadConfig();
}

/** The current configuration; each property reads through loadConfig(). */
export const config: Readonly<Config> = Object.defineProperties(
  {} as Config,
  Object.fromEntries(
    Object.keys(resolve({}, { NODE_ENV: 'test' })).map((k) => [
      k,
      { enumerable: true, get: () => loadConfig()[k as keyof Config] },
    ]),
  ),
);
