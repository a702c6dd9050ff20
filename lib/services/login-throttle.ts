import 'server-only';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';
import { getDb } from '@/lib/db/client';
import * as repo from '@/lib/db/repositories/auth-throttle';

const WINDOW_MS = 15 * 60_000;
const MAX_BLOCK_MS = 15 * 60_000;

const accountKey = (email: string) => `account:${email}`;
const addressKey = (address: string) => `address:${address}`;

/**
 * Brute-force protection for password checks, kept in the database so that every server instance shares
 * it. Each account and each client address may fail a few times within 15 minutes; after that every
 * further failure doubles the wait (1 s, 2 s, 4 s… up to 15 min) and attempts during the wait are refused
 * with 429 before any password is hashed, so guessing costs the attacker time and the server nothing.
 */
export async function assertNotThrottled(email: string, address: string | null): Promise<void> {
  const now = new Date();
  const keys = [accountKey(email), ...(address ? [addressKey(address)] : [])];
  const until = await repo.blockedUntil(await getDb(), keys, now);
  if (until) {
    const seconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
    throw new ApiError('rate_limited', `Too many failed sign-in attempts: try again in ${seconds} s`, {
      headers: { 'retry-after': String(seconds) },
    });
  }
}

export async function recordLoginFailure(email: string, address: string | null): Promise<void> {
  const db = await getDb();
  const now = new Date();
  const common = { windowMs: WINDOW_MS, maxBlockMs: MAX_BLOCK_MS, now };
  await repo.recordFailure(db, accountKey(email), { ...common, free: config.loginAccountAttempts });
  if (address) await repo.recordFailure(db, addressKey(address), { ...common, free: config.loginAddressAttempts });
  // Opportunistic clean-up keeps the table small without a scheduler.
  if (Math.random() < 0.02) await repo.deleteStale(db, new Date(now.getTime() - WINDOW_MS - MAX_BLOCK_MS));
}

/** A correct password forgets the account's failures (the address keeps its count: it may be guessing others). */
export async function recordLoginSuccess(email: string): Promise<void> {
  await repo.clearKey(await getDb(), accountKey(email));
}
