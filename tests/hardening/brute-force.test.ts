import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import * as signInRoute from '@/app/v1/auth/sign-in/route';
import * as tokenRoute from '@/app/v1/auth/token/route';
import { getDb } from '@/lib/db/client';
import { call, createUser, uniqueName } from '../support/helpers';

let address = 0;
// Per run: on PostgreSQL every test file and every earlier run share one auth_throttle table.
const RUN = randomBytes(4).toString('hex');
/**
 * A client address (the last X-Forwarded-For entry) no other test or run uses, so that tests never share an address
 * bucket. A random last octet collided now and then, and a test then met another test's failures.
 */
const newAddress = () => `203.0.113.7, 2001:db8:${RUN.slice(0, 4)}:${RUN.slice(4)}::${(++address).toString(16)}`;

function signIn(email: string, password: string, xff: string) {
  return call(signInRoute, 'POST', '/v1/auth/sign-in', {
    body: { email, password },
    headers: { 'x-forwarded-for': xff },
  });
}

afterEach(() => {
  delete process.env.TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS;
});

describe('brute-force protection (sign-in and the password grant)', () => {
  it('backs off an account after a few wrong passwords, even for the right one, from any address', async () => {
    const user = await createUser();
    for (let i = 0; i < 5; i++) expect((await signIn(user.email, 'wrong password', newAddress())).status).toBe(401);
    const blocked = await signIn(user.email, user.password, newAddress());
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(blocked.headers.get('set-cookie')).toBeNull();
    const token = await call(tokenRoute, 'POST', '/v1/auth/token', {
      body: { email: user.email, password: user.password, key_name: 'k' },
    });
    expect(token.status).toBe(429);
    // The count lives in the database, where every server instance sharing it sees the same back-off.
    const rows = await (
      await getDb()
    ).execute(sql`select failures, blocked_until from auth_throttle where key = ${`account:${user.email}`}`);
    const row = (rows as unknown as { rows: { failures: number; blocked_until: unknown }[] }).rows[0];
    expect(row.failures).toBe(5);
    expect(row.blocked_until).not.toBeNull();
  }, 60_000);

  it('lets the right password through and forgets the failures before the limit', async () => {
    const user = await createUser();
    for (let i = 0; i < 3; i++) await signIn(user.email, 'wrong password', newAddress());
    expect((await signIn(user.email, user.password, newAddress())).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await signIn(user.email, 'wrong password', newAddress())).status).toBe(401);
    expect((await signIn(user.email, user.password, newAddress())).status).toBe(200);
  }, 60_000);

  it('backs off a client address that tries many accounts', async () => {
    process.env.TUNEBOARD_LOGIN_ADDRESS_ATTEMPTS = '3';
    const user = await createUser();
    const xff = newAddress();
    for (let i = 0; i < 3; i++) {
      expect((await signIn(`${uniqueName('guess-')}@example.test`, 'some password', xff)).status).toBe(401);
    }
    expect((await signIn(user.email, user.password, xff)).status).toBe(429);
    expect((await signIn(user.email, user.password, newAddress())).status).toBe(200);
  }, 60_000);
});
