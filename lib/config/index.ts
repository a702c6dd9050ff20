import path from 'node:path';
import { envSchema, SETTING_NAMES, type Env } from './settings';

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

const MiB = 1024 * 1024;
/** Megabytes as whole bytes, at least one (fractions allowed: 0.5 MiB is 512 KiB). */
const mib = (value: number) => Math.max(1, Math.floor(value * MiB));

/** The configuration from the parsed variables, whose defaults the schema (settings.ts) has filled in. */
function resolve(raw: Env, env: NodeJS.ProcessEnv) {
  const port = raw.PORT;
  return {
    port,
    databaseUrl: raw.DATABASE_URL,
    databasePoolSize: raw.TUNEBOARD_DB_POOL_SIZE,
    /** Prepared statements kept per database connection (lib/db/statement-cache.ts); 0 turns them off. */
    dbStatementCache: raw.TUNEBOARD_DB_STATEMENT_CACHE,
    /** PGlite data directory, or `memory://` for an in-memory database. */
    dataDir: ((dir: string) => (dir.startsWith('memory://') ? dir : path.resolve(/*turbopackIgnore: true*/ dir)))(
      raw.TUNEBOARD_DATA_DIR,
    ),
    artifactDir: path.resolve(/*turbopackIgnore: true*/ raw.TUNEBOARD_ARTIFACT_DIR),
    /** Body limit of training-job and /log routes, which carry per-token logprobs (at least 256 MiB by default). */
    largeBodyLimitBytes: mib(raw.TUNEBOARD_MAX_BODY_MB),
    /** Body limit of every other JSON route. */
    smallBodyLimitBytes: mib(raw.TUNEBOARD_MAX_SMALL_BODY_MB),
    maxCheckpointBytes: raw.TUNEBOARD_MAX_CHECKPOINT_MB * MiB,
    /** Longest line of an uploaded dataset (JSONL): each line is parsed whole, on the dataset thread. */
    maxDatasetLineBytes: mib(raw.TUNEBOARD_MAX_DATASET_LINE_MB),
    baseModelsFile: path.resolve(/*turbopackIgnore: true*/ raw.TUNEBOARD_BASE_MODELS_FILE),
    /** Where relative base-model paths (built-in weights files, Hugging Face directories) resolve. */
    baseModelsDir: path.resolve(/*turbopackIgnore: true*/ raw.TUNEBOARD_BASE_MODELS_DIR),
    /** huggingface_hub's settings, for base models the server downloads from the Hub (lib/services/hub-models.ts). */
    hub: ((home: string) => ({
      home,
      cache: path.resolve(/*turbopackIgnore: true*/ raw.HF_HUB_CACHE ?? path.join(home, 'hub')),
      endpoint: raw.HF_ENDPOINT.replace(/\/+$/, ''),
      token: raw.HF_TOKEN,
      offline: ['1', 'on', 'yes', 'true'].includes((raw.HF_HUB_OFFLINE ?? '').trim().toLowerCase()),
    }))(path.resolve(/*turbopackIgnore: true*/ raw.HF_HOME)),
    upstream: raw.TUNEBOARD_UPSTREAM_URL
      ? { url: raw.TUNEBOARD_UPSTREAM_URL, apiKey: raw.TUNEBOARD_UPSTREAM_API_KEY }
      : undefined,
    /** The vLLM (OpenAI-compatible) server that serves `upstream` and `serve: "vllm"` base models: its /v1 URL. */
    upstreamUrl: raw.TUNEBOARD_UPSTREAM_URL?.replace(/\/+$/, ''),
    upstreamApiKey: raw.TUNEBOARD_UPSTREAM_API_KEY,
    /**
     * A folder both Tuneboard and the vLLM server can read, where checkpoints' LoRA adapters are written
     * before vLLM is asked to load them. Unset: checkpoints of vLLM-served models cannot be served.
     */
    vllmAdapterDir: raw.TUNEBOARD_VLLM_ADAPTER_DIR
      ? path.resolve(/*turbopackIgnore: true*/ raw.TUNEBOARD_VLLM_ADAPTER_DIR)
      : undefined,
    /** The same folder as the vLLM server sees it, when it is mounted at another path there (default: the same). */
    vllmAdapterDirOnServer:
      raw.TUNEBOARD_VLLM_ADAPTER_DIR_ON_SERVER ??
      (raw.TUNEBOARD_VLLM_ADAPTER_DIR
        ? path.resolve(/*turbopackIgnore: true*/ raw.TUNEBOARD_VLLM_ADAPTER_DIR)
        : undefined),
    /** vLLM's `--max-loras`: how many adapters Tuneboard keeps loaded before unloading the least recently used. */
    vllmMaxLoras: raw.TUNEBOARD_VLLM_MAX_LORAS,
    /** Wrong passwords within 15 minutes after which an account's attempts must wait (1 s, doubling per failure). */
    loginAccountAttempts: raw.TUNEBOARD_LOGIN_ACCOUNT_ATTEMPTS,
    /** The same for one client address, over all accounts (generous: many users may share one address). */
    loginAddressAttempts: raw.TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS,
    /** Reverse proxies whose X-Forwarded-For entries are believed (lib/api/client-address.ts); 0: the socket's address. */
    trustedProxies: raw.TUNEBOARD_TRUSTED_PROXIES,
    /** How long a small body may take to arrive, and a streamed one may stall (lib/api/fast-path.ts): then 408. */
    bodyTimeoutMs: raw.TUNEBOARD_BODY_TIMEOUT_SECONDS * 1000,
    /** The liveness thread's port (lib/runtime/liveness.ts); unset: none. */
    healthPort: raw.TUNEBOARD_HEALTH_PORT,
    healthStallMs: raw.TUNEBOARD_HEALTH_STALL_SECONDS * 1000,
    /**
     * The embedded database's WebAssembly heap never shrinks; past this size (after a burst of large rows) its
     * thread is restarted while idle, which gives the memory back. Not for `memory://` databases.
     */
    pgliteRecycleHeapBytes: mib(raw.TUNEBOARD_PGLITE_RECYCLE_MB),
    /**
     * Queries sent to the embedded database's thread at once outside a transaction (lib/db/pglite-connection.ts):
     * more keep its thread busy while the request thread reads answers; 1 sends one at a time.
     */
    pglitePipeline: raw.TUNEBOARD_PGLITE_PIPELINE,
    /** Milliseconds of request starts and embedded-database answers per event-loop turn (lib/event-loop/turns.ts). */
    requestWorkPerTurnMs: raw.TUNEBOARD_REQUEST_WORK_PER_TURN_MS,
    /** Seconds between checks for embedded-database tables whose planner statistics are stale (0: never). */
    pgliteAnalyzeSeconds: raw.TUNEBOARD_PGLITE_ANALYZE_SECONDS,
    /** A PGlite dump an in-memory database starts from (tests: one migrated dump instead of a new database per file). */
    pgliteSnapshot: raw.TUNEBOARD_PGLITE_SNAPSHOT,
    /** Nice value the server's helper threads take (lib/config/thread-priority.ts); 0 leaves them alone. */
    threadNice: Math.min(raw.TUNEBOARD_THREAD_NICE, 19),
    /** Requests with bodies past the small limit that one process handles at once; more get 429 + Retry-After. */
    maxLargeRequests: raw.TUNEBOARD_MAX_LARGE_REQUESTS,
    /** Largest structured-output constraint (its JSON) the built-in engine compiles; compile time grows with it. */
    maxStructuredOutputBytes: Math.max(1, Math.floor(raw.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB * 1024)),
    /** A structured output constrains the think block too (vLLM's `enable_in_reasoning`); else it starts after it. */
    structuredOutputsInReasoning: raw.TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING === '1',
    /** bench:train only: a Python interpreter with PyTorch for the anchor (else a venv, PATH, /usr/bin/python3). */
    benchPython: raw.TUNEBOARD_BENCH_PYTHON,
    /** The active virtual environment (`source venv/bin/activate`), searched for PyTorch by bench:train. */
    virtualEnv: env.VIRTUAL_ENV || undefined,
    searchPath: env.PATH ?? '',
    inferenceThreads: raw.TUNEBOARD_INFERENCE_THREADS,
    modelCacheBytes: raw.TUNEBOARD_MODEL_CACHE_MB * MiB,
    maxLogprobs: raw.TUNEBOARD_MAX_LOGPROBS,
    /** lib/api/fast-path.ts serves /v1 ahead of Next.js (production servers only). */
    fastRoutes: raw.TUNEBOARD_FAST_ROUTES !== '0',
    runnerConcurrency: raw.TUNEBOARD_RUNNER_CONCURRENCY,
    trainThreads: raw.TUNEBOARD_TRAIN_THREADS,
    workerToken: raw.TUNEBOARD_WORKER_TOKEN,
    serverUrl: raw.TUNEBOARD_SERVER_URL ?? `http://127.0.0.1:${port}`,
    workerId: raw.TUNEBOARD_WORKER_ID,
    jobLeaseSeconds: raw.TUNEBOARD_JOB_LEASE_SECONDS,
    jobIdleMs: raw.TUNEBOARD_JOB_IDLE_MINUTES * 60_000,
    /** How long retrieve_future waits for a Tinker request to finish before answering try_again (docs/tinker.md §2.2). */
    tinkerWaitMs: raw.TUNEBOARD_TINKER_WAIT_SECONDS * 1000,
    tinkerSessionMs: raw.TUNEBOARD_TINKER_SESSION_MINUTES * 60_000,
    s3:
      raw.TUNEBOARD_S3_ENDPOINT && raw.TUNEBOARD_S3_BUCKET
        ? {
            endpoint: raw.TUNEBOARD_S3_ENDPOINT,
            bucket: raw.TUNEBOARD_S3_BUCKET,
            region: raw.TUNEBOARD_S3_REGION,
            accessKeyId: raw.TUNEBOARD_S3_ACCESS_KEY_ID ?? '',
            secretAccessKey: raw.TUNEBOARD_S3_SECRET_ACCESS_KEY ?? '',
            prefix: raw.TUNEBOARD_S3_PREFIX,
          }
        : undefined,
    logLevel: raw.TUNEBOARD_LOG_LEVEL,
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
  const value = resolve(parsed.data, env);
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
    Object.keys(resolve(envSchema.parse({}), { NODE_ENV: 'test' })).map((k) => [
      k,
      { enumerable: true, get: () => loadConfig()[k as keyof Config] },
    ]),
  ),
);
