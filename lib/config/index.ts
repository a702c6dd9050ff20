import path from 'node:path';

/**
 * Server configuration from the environment, read once. Every knob has an embedded default so that a
 * fresh clone runs with nothing set (README "Configuration" lists them).
 */
function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return Math.floor(value);
}

const MiB = 1024 * 1024;

/** Sizes are configured in MiB and may be fractional (0.5 = 512 KiB). */
function mibEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of MiB, got "${raw}"`);
  return Math.max(1, Math.floor(value * MiB));
}

export const config = {
  get databaseUrl(): string | undefined {
    return process.env.DATABASE_URL || undefined;
  },
  get databasePoolSize(): number {
    return intEnv('TUNEBOARD_DB_POOL_SIZE', 10);
  },
  /** PGlite data directory, or `memory://` for an in-memory database. */
  get dataDir(): string {
    const dir = process.env.TUNEBOARD_DATA_DIR || path.join('.data', 'pglite');
    return dir.startsWith('memory://') ? dir : path.resolve(/*turbopackIgnore: true*/ dir);
  },
  get artifactDir(): string {
    return path.resolve(/*turbopackIgnore: true*/ process.env.TUNEBOARD_ARTIFACT_DIR || path.join('.data', 'artifacts'));
  },
  /** Body limit of training-job and /log routes, which carry per-token logprobs (compat §1.3: ≥ 256 MiB). */
  get largeBodyLimitBytes(): number {
    return mibEnv('TUNEBOARD_MAX_BODY_MB', 256);
  },
  /** Body limit of every other JSON route. */
  get smallBodyLimitBytes(): number {
    return mibEnv('TUNEBOARD_MAX_SMALL_BODY_MB', 8);
  },
  get baseModelsFile(): string {
    return path.resolve(/*turbopackIgnore: true*/ process.env.TUNEBOARD_BASE_MODELS_FILE || path.join('config', 'base-models.json'));
  },
  /** Where relative base-model paths (built-in weights files, Hugging Face directories) resolve. */
  get baseModelsDir(): string {
    return path.resolve(/*turbopackIgnore: true*/ process.env.TUNEBOARD_BASE_MODELS_DIR || process.cwd());
  },
  /** The vLLM (OpenAI-compatible) server that serves `upstream` and `serve: "vllm"` base models: its /v1 URL. */
  get upstreamUrl(): string | undefined {
    return process.env.TUNEBOARD_UPSTREAM_URL?.replace(/\/+$/, '') || undefined;
  },
  get upstreamApiKey(): string | undefined {
    return process.env.TUNEBOARD_UPSTREAM_API_KEY || undefined;
  },
  /**
   * A folder both Tuneboard and the vLLM server can read, where checkpoints' LoRA adapters are written
   * before vLLM is asked to load them. Unset: checkpoints of vLLM-served models cannot be served.
   */
  get vllmAdapterDir(): string | undefined {
    const dir = process.env.TUNEBOARD_VLLM_ADAPTER_DIR;
    return dir ? path.resolve(/*turbopackIgnore: true*/ dir) : undefined;
  },
  /** The same folder as the vLLM server sees it, when it is mounted at another path there (default: the same). */
  get vllmAdapterDirOnServer(): string | undefined {
    return process.env.TUNEBOARD_VLLM_ADAPTER_DIR_ON_SERVER || this.vllmAdapterDir;
  },
  /** vLLM's `--max-loras`: how many adapters Tuneboard keeps loaded before unloading the least recently used. */
  get vllmMaxLoras(): number {
    return intEnv('TUNEBOARD_VLLM_MAX_LORAS', 4);
  },
  get isProduction(): boolean {
    return process.env.NODE_ENV === 'production';
  },
};
