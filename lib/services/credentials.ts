import 'server-only';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { ApiError } from '@/lib/errors';

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

// OWASP's scrypt floor (N=2^17 would be stronger but costs ~130 MiB per hash; 2^15 keeps sign-in fast on 2 cores).
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 };

/**
 * scrypt runs on libuv's thread pool; dozens at once (a sign-in flood) take every core from the request
 * thread, and health checks answered in seconds. One hash at a time per process, with a bounded queue:
 * past it, callers get 429 at once instead of piling up.
 */
const MAX_QUEUED_HASHES = 32;
let hashing = false;
const hashQueue: (() => void)[] = [];

export async function withHashingSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (hashing) {
    if (hashQueue.length >= MAX_QUEUED_HASHES) {
      throw new ApiError('rate_limited', 'Too many sign-in attempts at once: retry shortly', {
        headers: { 'retry-after': '1' },
      });
    }
    await new Promise<void>((resolve) => hashQueue.push(resolve));
  }
  hashing = true;
  try {
    return await fn();
  } finally {
    const next = hashQueue.shift();
    if (next) next();
    else hashing = false;
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await withHashingSlot(() => scrypt(password.normalize('NFKC'), salt, SCRYPT.keylen, SCRYPT));
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64url');
  const actual = await withHashingSlot(() =>
    scrypt(password.normalize('NFKC'), Buffer.from(saltText, 'base64url'), expected.length, {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: SCRYPT.maxmem,
    }),
  );
  return crypto.timingSafeEqual(actual, expected);
}

/** Keys and session tokens are 256-bit random values; only their sha256 is stored. */
export function newSecret(prefix: string): string {
  return `${prefix}${crypto.randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

export const API_KEY_PREFIX = 'tb_';

/** 8 characters of [a-z0-9], the tracking-run id format clients pass on as a W&B run id (docs/contract.md §2.1). */
export function newRunId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.randomBytes(8);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}
