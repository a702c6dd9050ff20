import 'server-only';
import crypto from 'node:crypto';
import { config } from '@/lib/config';

const globalForToken = globalThis as unknown as { __tuneboardBootToken?: string };

/**
 * Workers authenticate with a token, not a user key. The configured TUNEBOARD_WORKER_TOKEN admits external
 * workers (shared by every server instance); the boot token is made per server process for the built-in
 * runner it spawns, so a fresh install needs no configuration.
 */
export function bootWorkerToken(): string {
  return (globalForToken.__tuneboardBootToken ??= `tbw_${crypto.randomBytes(32).toString('base64url')}`);
}

export function isValidWorkerToken(candidate: string): boolean {
  const accepted = [bootWorkerToken(), config.workerToken].filter((t): t is string => Boolean(t));
  const given = Buffer.from(candidate);
  return accepted.some((t) => {
    const expected = Buffer.from(t);
    return expected.length === given.length && crypto.timingSafeEqual(expected, given);
  });
}
