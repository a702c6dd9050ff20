import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/**
 * Every environment variable Tuneboard reads, with its type, default and meaning. `lib/config` parses them
 * all through one zod schema built from this list, and `scripts/config-table.ts` prints docs/configuration.md's
 * configuration table from it (a test keeps the two equal), so a new variable is added here and nowhere else.
 *
 * A default that is a value is written once, in `withDefault`: the schema fills it in and the table prints it.
 * Defaults that follow from other settings (`$HF_HOME/hub`, `http://127.0.0.1:$PORT`) are resolved in
 * lib/config/index.ts, and their text here says so.
 */
export interface Setting {
  /** The environment variable. */
  env: string;
  schema: z.ZodType<unknown, string | undefined>;
  /** The default as docs/configuration.md shows it. */
  defaultText: string;
  meaning: string;
}

/** A value the variable takes when unset or empty; the table shows it as it is. */
function withDefault<T extends string | number>(base: z.ZodType<T | undefined, string | undefined>, value: T) {
  return { schema: base.transform((v): T => v ?? value), defaultText: `\`${value}\`` };
}

/** A default computed where the process runs (its cores, home folder, host name), described in words for the table. */
function computedDefault<T>(base: z.ZodType<T | undefined, string | undefined>, value: () => T, defaultText: string) {
  return { schema: base.transform((v): T => v ?? value()), defaultText };
}

/** What a bad value is told. */
const positive = (what: string) => `must be a positive ${what}`;

/** Unset and empty both mean "use the default", as a shell's `VAR=` would suggest. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** A positive number (fractions allowed: 0.5 MiB is 512 KiB). */
const positiveNumber = optionalText.pipe(
  z
    .string()
    .optional()
    .refine((v) => v === undefined || (Number.isFinite(Number(v)) && Number(v) > 0), positive('number'))
    .transform((v) => (v === undefined ? undefined : Number(v))),
);

/** A positive count; fractions are floored as before (`2.5` threads is 2). */
const positiveCount = optionalText.pipe(
  z
    .string()
    .optional()
    .refine((v) => v === undefined || (Number.isFinite(Number(v)) && Number(v) >= 1), positive('integer'))
    .transform((v) => (v === undefined ? undefined : Math.floor(Number(v)))),
);

/** Zero or more. */
const count = optionalText.pipe(
  z
    .string()
    .optional()
    .refine((v) => v === undefined || (Number.isFinite(Number(v)) && Number(v) >= 0), 'must be 0 or a positive integer')
    .transform((v) => (v === undefined ? undefined : Math.floor(Number(v)))),
);

const httpUrl = optionalText.pipe(
  z
    .string()
    .optional()
    .refine((v) => v === undefined || /^https?:\/\/[^/]/.test(v), 'must be an http:// or https:// URL'),
);

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const SETTINGS = [
  { env: 'PORT', ...withDefault(positiveCount, 3000), meaning: 'HTTP port of `npm start` / `npm run dev`' },
  {
    env: 'DATABASE_URL',
    schema: optionalText,
    defaultText: 'unset',
    meaning:
      'PostgreSQL connection string. Unset: embedded PGlite. Several server instances may share one PostgreSQL database.',
  },
  {
    env: 'TUNEBOARD_DATA_DIR',
    ...withDefault(optionalText, '.data/pglite'),
    meaning: 'PGlite data directory (`memory://` for a throw-away in-memory database)',
  },
  {
    env: 'TUNEBOARD_ARTIFACT_DIR',
    ...withDefault(optionalText, '.data/artifacts'),
    meaning: 'Artifact store (checkpoints, datasets)',
  },
  {
    env: 'TUNEBOARD_MAX_BODY_MB',
    ...withDefault(positiveNumber, 256),
    meaning:
      'Body limit of training-job, `/log` and dataset-upload requests (trajectories carry per-token logprobs); larger bodies get 413',
  },
  {
    env: 'TUNEBOARD_MAX_SMALL_BODY_MB',
    ...withDefault(positiveNumber, 8),
    meaning: 'Body limit of every other JSON route',
  },
  {
    env: 'TUNEBOARD_MAX_DATASET_LINE_MB',
    ...withDefault(positiveNumber, 8),
    meaning:
      'Longest line of an uploaded SFT dataset (JSONL); a longer line gets 422 naming it (lines are parsed one at a time, off the request thread)',
  },
  {
    env: 'TUNEBOARD_MAX_CHECKPOINT_MB',
    ...withDefault(positiveNumber, 4096),
    meaning: 'Largest checkpoint a training worker may upload; larger uploads get 413',
  },
  {
    env: 'TUNEBOARD_DB_POOL_SIZE',
    ...withDefault(positiveCount, 10),
    meaning: 'PostgreSQL connections per server process',
  },
  {
    env: 'TUNEBOARD_DB_STATEMENT_CACHE',
    ...withDefault(count, 500),
    meaning:
      'Prepared statements kept per database connection, so repeated queries skip parsing and planning; `0` behind a pooler in transaction mode (PgBouncer before 1.21)',
  },
  {
    env: 'TUNEBOARD_BASE_MODELS_FILE',
    ...withDefault(optionalText, 'config/base-models.json'),
    meaning:
      'Base models that models can be created from, and which backend serves each; an edit is read within a second, without a restart',
  },
  {
    env: 'HF_HOME',
    ...computedDefault(optionalText, () => path.join(os.homedir(), '.cache', 'huggingface'), '`~/.cache/huggingface`'),
    meaning:
      "Hugging Face's folder, read as `huggingface_hub` reads it: an `hf` base model named by its Hub id (no `path`) is downloaded into its `hub` cache for serving. A server and a Python worker on one machine share one copy when they see the same value (they do by default, run as one user)",
  },
  {
    env: 'HF_HUB_CACHE',
    schema: optionalText,
    defaultText: '`$HF_HOME/hub`',
    meaning: 'The Hugging Face cache folder itself, when it is not `$HF_HOME/hub`',
  },
  {
    env: 'HF_ENDPOINT',
    ...withDefault(httpUrl, 'https://huggingface.co'),
    meaning: 'The Hugging Face Hub (or a mirror of it) that Hub-named base models are downloaded from',
  },
  {
    env: 'HF_TOKEN',
    schema: optionalText,
    defaultText: 'unset (`$HF_HOME/token` if present)',
    meaning: 'Token for gated or private Hub models',
  },
  {
    env: 'HF_HUB_OFFLINE',
    schema: optionalText,
    defaultText: 'unset',
    meaning: '`1`: never ask the Hub; Hub-named base models are served only from the cache',
  },
  {
    env: 'TUNEBOARD_BASE_MODELS_DIR',
    ...computedDefault(optionalText, () => process.cwd(), 'the working directory'),
    meaning:
      "Where the relative `path` of a base model in the base-models file resolves (a Hugging Face folder); the built-in models' shipped weights always resolve against the application",
  },
  {
    env: 'TUNEBOARD_UPSTREAM_URL',
    schema: httpUrl,
    defaultText: 'unset',
    meaning:
      'The vLLM (OpenAI-compatible) server for `upstream` and `"serve": "vllm"` base models and their checkpoints (LoRA adapters named `entity/project/name:stepN`); without it those models answer 503',
  },
  {
    env: 'TUNEBOARD_UPSTREAM_API_KEY',
    schema: optionalText,
    defaultText: 'unset',
    meaning: 'Bearer key sent to `TUNEBOARD_UPSTREAM_URL`',
  },
  {
    env: 'TUNEBOARD_VLLM_ADAPTER_DIR',
    schema: optionalText,
    defaultText: 'unset',
    meaning:
      'A folder Tuneboard and the vLLM server both read: checkpoints of `serve: "vllm"` models are written there as PEFT adapters before vLLM loads them; unset: only their base models are served',
  },
  {
    env: 'TUNEBOARD_VLLM_ADAPTER_DIR_ON_SERVER',
    schema: optionalText,
    defaultText: '`TUNEBOARD_VLLM_ADAPTER_DIR`',
    meaning: 'The same folder as the vLLM server sees it, when it is mounted at another path there',
  },
  {
    env: 'TUNEBOARD_VLLM_MAX_LORAS',
    ...withDefault(positiveCount, 4),
    meaning: "vLLM's `--max-loras`: adapters kept loaded before the least recently used is unloaded",
  },
  {
    env: 'TUNEBOARD_INFERENCE_THREADS',
    ...computedDefault(positiveCount, defaultThreadCount, 'one per core, at most 2'),
    meaning: 'Worker threads that generate (continuous batching per model)',
  },
  {
    env: 'TUNEBOARD_MODEL_CACHE_MB',
    ...withDefault(positiveNumber, 512),
    meaning: 'Weight cache per inference thread (LRU)',
  },
  {
    env: 'TUNEBOARD_MAX_LOGPROBS',
    ...withDefault(positiveCount, 20),
    meaning: "Most `top_logprobs` / `prompt_logprobs` a chat request may ask for (vLLM's `--max-logprobs`)",
  },
  {
    env: 'TUNEBOARD_STRUCTURED_OUTPUTS_IN_REASONING',
    ...withDefault(optionalText.pipe(z.enum(['0', '1']).optional()), '0'),
    meaning:
      "`1`: a structured output constrains a reasoning model's think block too (vLLM's `--structured-outputs-config.enable_in_reasoning`); by default it applies after `</think>`",
  },
  {
    env: 'TUNEBOARD_FAST_ROUTES',
    ...withDefault(optionalText.pipe(z.enum(['0', '1']).optional()), '1'),
    meaning:
      '`0`: every `/v1` request goes through Next.js routing; by default a production server serves them ahead of it (`lib/api/fast-path.ts`)',
  },
  {
    env: 'TUNEBOARD_RUNNER_CONCURRENCY',
    ...withDefault(count, 1),
    meaning: 'Training worker processes the server starts (`0`: none; use external workers)',
  },
  {
    env: 'TUNEBOARD_TRAIN_THREADS',
    ...computedDefault(positiveCount, defaultThreadCount, 'one per core, at most 2'),
    meaning: 'Threads per SFT job in a training worker (`1`: no helper thread)',
  },
  {
    env: 'TUNEBOARD_WORKER_TOKEN',
    schema: optionalText,
    defaultText: 'unset',
    meaning:
      'Token that external training workers (`npm run worker`) present; the built-in runner gets a per-boot token',
  },
  {
    env: 'TUNEBOARD_SERVER_URL',
    schema: httpUrl,
    defaultText: '`http://127.0.0.1:$PORT`',
    meaning: 'The server an external worker (`npm run worker`) claims jobs from',
  },
  {
    env: 'TUNEBOARD_WORKER_ID',
    ...computedDefault(optionalText, () => `${os.hostname()}:${process.pid}`, 'host name and process id'),
    meaning: 'How an external worker names itself in claims and leases',
  },
  {
    env: 'TUNEBOARD_JOB_LEASE_SECONDS',
    ...withDefault(positiveNumber, 60),
    meaning: 'A job whose worker stops heart-beating for this long is recovered (requeued, or failed once it started)',
  },
  {
    env: 'TUNEBOARD_JOB_IDLE_MINUTES',
    ...withDefault(positiveNumber, 30),
    meaning: 'A running job with no new event for this long fails',
  },
  {
    env: 'TUNEBOARD_TINKER_WAIT_SECONDS',
    ...withDefault(positiveNumber, 20),
    meaning:
      "How long a Tinker SDK's `retrieve_future` is held open while its request runs, before it is told to try again (keep it under the SDK's 45 s timeout)",
  },
  {
    env: 'TUNEBOARD_TINKER_SESSION_MINUTES',
    ...withDefault(positiveNumber, 3),
    meaning:
      'A Tinker SDK session not heard from for this long (it heart-beats every 10 s) ends: its training clients are closed and their workers free the memory; models and saved weights stay. The SDK never closes a training client itself, so this is how soon a finished script gives its worker back',
  },
  {
    env: 'TUNEBOARD_LOGIN_ACCOUNT_ATTEMPTS',
    ...withDefault(positiveCount, 5),
    meaning:
      'Wrong passwords for one account within 15 minutes before each further attempt waits (1 s, doubling per failure)',
  },
  {
    env: 'TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS',
    ...withDefault(positiveCount, 30),
    meaning: 'The same for one client address, over all accounts',
  },
  {
    env: 'TUNEBOARD_TRUSTED_PROXIES',
    ...withDefault(count, 0),
    meaning:
      "Reverse proxies in front of the server that append the client's address to `X-Forwarded-For`. `0`: the client address (for the per-address sign-in limit) is the socket's and the header is ignored, as it must be when clients connect directly (they could write any address there); `1` behind one proxy (nginx, a load balancer): the last entry",
  },
  {
    env: 'TUNEBOARD_BODY_TIMEOUT_SECONDS',
    ...withDefault(positiveNumber, 15),
    meaning:
      'A request body of up to 64 KiB must arrive whole within this long, and a longer one must not stall for longer; otherwise the answer is 408 and the connection is closed (the `/v1` API on a production server)',
  },
  {
    env: 'TUNEBOARD_HEALTH_PORT',
    schema: positiveCount,
    defaultText: 'unset',
    meaning:
      "A second port on which a thread of its own answers `GET /livez` (a production server): 200 while the request thread keeps turning, 503 once it has not for `TUNEBOARD_HEALTH_STALL_SECONDS`. Busy request handling cannot delay it, as it can `/v1/health`'s: point an orchestrator's liveness probe here",
  },
  {
    env: 'TUNEBOARD_HEALTH_STALL_SECONDS',
    ...withDefault(positiveNumber, 10),
    meaning: 'How long the request thread may go without an event-loop turn before `/livez` answers 503',
  },
  {
    env: 'TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB',
    ...withDefault(positiveNumber, 512),
    meaning:
      'Largest structured-output constraint (a `json` schema, `regex` or `choice` list, as JSON) the built-in engine compiles; larger gets 400 naming this (a 15,000-entry `enum` is about 300 KiB and compiles in about 2 s on an inference thread)',
  },
  {
    env: 'TUNEBOARD_MAX_LARGE_REQUESTS',
    ...withDefault(positiveCount, 2),
    meaning:
      'Requests with bodies past `TUNEBOARD_MAX_SMALL_BODY_MB` (dataset uploads included) that one server process reads at once; more get 429 with Retry-After',
  },
  {
    env: 'TUNEBOARD_BENCH_PYTHON',
    schema: optionalText,
    defaultText: 'unset',
    meaning:
      '`bench:train` only: a Python with PyTorch for the reference run (else the active venv, `PATH`, `/usr/bin/python3`)',
  },
  {
    env: 'TUNEBOARD_PGLITE_RECYCLE_MB',
    ...withDefault(positiveNumber, 512),
    meaning: "The embedded database's heap size past which its thread is restarted while idle, giving the memory back",
  },
  {
    env: 'TUNEBOARD_PGLITE_PIPELINE',
    ...withDefault(positiveCount, 4),
    meaning:
      "Queries the embedded database's thread is given at once outside a transaction, so it runs the next while the request thread reads the last answer; `1` sends one at a time, which on a 2-core machine kept `/v1/health` quicker under heavy load at the cost of list throughput",
  },
  {
    env: 'TUNEBOARD_REQUEST_WORK_PER_TURN_MS',
    ...withDefault(count, 2),
    meaning:
      "Milliseconds of request handlers started, and database answers taken up, per turn of the request thread's event loop; the rest wait a turn, in order, while its sockets are read again, so that a burst does not hold back a health probe or a stream's next token. `0` takes everything at once",
  },
  {
    env: 'TUNEBOARD_PGLITE_SNAPSHOT',
    schema: optionalText,
    defaultText: 'unset',
    meaning:
      "A dump of a PGlite data directory (the `.tar` PGlite's `dumpDataDir()` writes) that an in-memory database (`memory://`) starts from instead of an empty one. The tests use a migrated one, so that each test file does not create and migrate its own database",
  },
  {
    env: 'TUNEBOARD_PGLITE_ANALYZE_SECONDS',
    ...withDefault(count, 60),
    meaning:
      "How often the embedded database's planner statistics are refreshed for tables that changed, and its small tables (up to 8 MiB) with many dead rows are vacuumed (PostgreSQL's autovacuum does both on a server); `0` turns it off",
  },
  {
    env: 'TUNEBOARD_THREAD_NICE',
    ...withDefault(count, 5),
    meaning:
      'How far below the request thread the engine, embedded-database and body-parsing threads are scheduled (Linux nice, 0 to 19): when they compete for the cores, requests and health checks go first; `0` treats them alike',
  },
  {
    env: 'TUNEBOARD_S3_ENDPOINT',
    schema: httpUrl,
    defaultText: 'unset',
    meaning:
      'S3-compatible object storage for artifacts instead of `TUNEBOARD_ARTIFACT_DIR` (with `TUNEBOARD_S3_BUCKET`)',
  },
  { env: 'TUNEBOARD_S3_BUCKET', schema: optionalText, defaultText: 'unset', meaning: 'Bucket of the artifact store' },
  {
    env: 'TUNEBOARD_S3_REGION',
    ...withDefault(optionalText, 'us-east-1'),
    meaning: 'Region used to sign requests',
  },
  { env: 'TUNEBOARD_S3_ACCESS_KEY_ID', schema: optionalText, defaultText: 'unset', meaning: 'S3 access key id' },
  {
    env: 'TUNEBOARD_S3_SECRET_ACCESS_KEY',
    schema: optionalText,
    defaultText: 'unset',
    meaning: 'S3 secret access key',
  },
  { env: 'TUNEBOARD_S3_PREFIX', schema: optionalText, defaultText: 'unset', meaning: 'Key prefix inside the bucket' },
  {
    env: 'TUNEBOARD_LOG_LEVEL',
    ...withDefault(optionalText.pipe(z.enum(LOG_LEVELS).optional()), 'info'),
    meaning: `Least severe log level written (one JSON object per line on stdout): ${LOG_LEVELS.map((l) => `\`${l}\``).join(', ')}`,
  },
] as const satisfies readonly Setting[];

export const SETTING_NAMES = SETTINGS.map((s) => s.env);

type EnvShape = { [S in (typeof SETTINGS)[number] as S['env']]: S['schema'] };

/**
 * The whole environment as one zod schema: each variable typed, its default filled in, with a message naming it.
 * Its output type is what lib/config resolves the configuration from, so no value is cast on the way.
 */
export const envSchema = z.object(Object.fromEntries(SETTINGS.map((s) => [s.env, s.schema])) as EnvShape);
export type Env = z.output<typeof envSchema>;

export function defaultThreadCount() {
  return Math.min(2, os.availableParallelism());
}
