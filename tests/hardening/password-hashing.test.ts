import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import { withHashingSlot } from '@/lib/services/credentials';

/**
 * 64 concurrent sign-ins used to run 64 scrypt computations at once on the thread pool, starving the request
 * thread (health took 2.8 s). Password hashing now runs one at a time per process, with a bounded queue.
 */
describe('password hashing is bounded', () => {
  it('runs hashes one at a time and refuses with 429 past the queue bound', async () => {
    let running = 0;
    let peak = 0;
    const task = () =>
      withHashingSlot(async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return 'ok';
      });
    const results = await Promise.allSettled(Array.from({ length: 80 }, task));
    expect(peak).toBe(1);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    const reason = (refused[0] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(ApiError);
    expect(reason.status).toBe(429);
    expect(reason.headers['retry-after']).toBeDefined();
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(32);
    // Once the queue drains, hashing is admitted again.
    expect(await task()).toBe('ok');
  });
});
