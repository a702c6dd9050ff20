import { eq } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as sessionRoute from '@/app/v1/auth/session/route';
import { getDb } from '@/lib/db/client';
import { isDelivering } from '@/lib/db/notifications';
import { apiKeys } from '@/lib/db/schema';
import { sha256 } from '@/lib/services/credentials';
import { principalChanged } from '@/lib/services/principal-cache';
import { call, createUser, noticeFromElsewhere, until } from '../support/helpers';

const session = (key: string) => call(sessionRoute, 'GET', '/v1/auth/session', { key });

/** A notice naming the user, as another server process sends it. */
const authNotice = (userId: string) => noticeFromElsewhere('tuneboard_auth', userId, () => principalChanged([userId]));

describe('cached authentication', () => {
  it('serves a key from the cache until a notice names its user, then reads the database again', async () => {
    const user = await createUser();
    const first = await session(user.key);
    expect(first.status).toBe(200);
    const userId = first.body.user.id as string;
    // On PostgreSQL nothing is cached until the listener is connected: wait for it, then fill the cache.
    expect(await until(async () => isDelivering(), 5000)).toBe(true);
    expect((await session(user.key)).status).toBe(200);

    // Revoked behind the services' back (as another process's write looks from here): the cached caller
    // still answers, which shows the cache is in use...
    const db = await getDb();
    await db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(eq(apiKeys.keyHash, sha256(user.key)));
    expect((await session(user.key)).status).toBe(200);

    // ...and the notice drops it at once, without waiting for the entry's time limit.
    await authNotice(userId);
    expect(await until(async () => (await session(user.key)).status === 401, 2000)).toBe(true);
  });

  it('keeps serving other users from the cache when one user changes', async () => {
    const a = await createUser();
    const b = await createUser();
    const idA = (await session(a.key)).body.user.id as string;
    expect(await until(async () => isDelivering(), 5000)).toBe(true);
    expect((await session(b.key)).status).toBe(200);
    const db = await getDb();
    await db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(eq(apiKeys.keyHash, sha256(b.key)));
    await authNotice(idA);
    await new Promise((r) => setTimeout(r, 200));
    // b was not named: still served from the cache (its revocation here bypassed the services on purpose).
    expect((await session(b.key)).status).toBe(200);
  });

  it('reads the database once for concurrent requests of one key, and afresh after an invalidation', async () => {
    const { cachedPrincipal, principalChanged } = await import('@/lib/services/principal-cache');
    const userId = randomUUID();
    const key = `test:${randomUUID()}`;
    let loads = 0;
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const load = async () => {
      const n = ++loads;
      await slow;
      return { value: `principal ${n}`, userId, validUntil: null };
    };
    const burst = Array.from({ length: 20 }, () => cachedPrincipal(key, load));
    expect(loads).toBe(1);
    // A lookup that begins after the user changed must not take the answer of one that began before.
    await principalChanged([userId]);
    const after = cachedPrincipal(key, load);
    expect(loads).toBe(2);
    release();
    expect(new Set(await Promise.all(burst))).toEqual(new Set(['principal 1']));
    expect(await after).toBe('principal 2');
  });
});
