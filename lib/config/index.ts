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
  /** Wrong passwords within 15 minutes after which an account's attempts must wait (1 s, doubling per failure). */
  get loginAccountAttempts(): number {
    return intEnv('TUNEBOARD_LOGIN_ACCOUNT_ATTEMPTS', 5);
  },
  /** The same for one client address, over all accounts (generous: many users may share one address). */
  get loginAddressAttempts(): number {
    return intEnv('TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS', 30);
  },
  /** bench:train only: a Python interpreter with PyTorch for the anchor (else a venv, PATH, /usr/bin/python3). */
  get benchPython(): string | undefined {
    return process.env.TUNEBOARD_BENCH_PYTHON || undefined;
  },
  /** The active virtual environment (set by `source venv/bin/activate`), searched for PyTorch by bench:train. */
  get virtualEnv(): string | undefined {
    return process.env.VIRTUAL_ENV || undefined;
  },
  get searchPath(): string {
    return process.env.PATH ?? '';
  },
  /** Requests with bodies past the small limit that one process handles at once; more get 429 + Retry-After. */
  get maxLargeRequests(): number {
    return intEnv('TUNEBOARD_MAX_LARGE_REQUESTS', 2);
  },
  get isProduction(): boolean {
    return process.env.NODE_ENV === 'production';
  },
};
