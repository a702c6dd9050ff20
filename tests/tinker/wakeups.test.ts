import { describe, expect, it } from 'vitest';
import { listenFor, wake, wakeWith } from '@/lib/jobs/server/tinker-wakeups';

/**
 * lib/jobs/server/tinker-wakeups.ts: a listener registered before a check hears a wake-up that lands between the check and
 * the wait (the worker's poll and retrieve_future listen, read, then wait), instead of sleeping a re-check (2 s).
 */
describe('tinker wake-ups', () => {
  it('a wake-up between listening and waiting ends the wait at once', async () => {
    const key = `test:${Math.random()}`;
    const listener = listenFor([key]);
    await wake(key); // lands while the caller reads the database
    const started = performance.now();
    await listener.wait(10_000);
    listener.close();
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('a wake-up during the wait ends it; without one, the wait ends at its limit', async () => {
    const key = `test:${Math.random()}`;
    const woken = listenFor([key]);
    setTimeout(() => void wake(key), 20);
    const started = performance.now();
    await woken.wait(10_000);
    woken.close();
    expect(performance.now() - started).toBeLessThan(1500);

    const idle = listenFor([`${key}:other`]);
    const t = performance.now();
    await idle.wait(50);
    idle.close();
    expect(performance.now() - t).toBeGreaterThanOrEqual(45);
  });

  it('wakeWith hands its value to the listeners of this process; wake hands none', async () => {
    const key = `test:${Math.random()}`;
    const early = listenFor([key]);
    const late = listenFor([key]);
    await wakeWith(key, { id: 'r1', status: 'done' });
    expect(await early.wait(10_000)).toEqual({ id: 'r1', status: 'done' });
    expect(await late.wait(10_000)).toEqual({ id: 'r1', status: 'done' });
    early.close();
    late.close();
    const plain = listenFor([key]);
    await wake(key);
    expect(await plain.wait(10_000)).toBeUndefined();
    plain.close();
  });

  it('an aborted signal ends the wait, and close() forgets the listener', async () => {
    const key = `test:${Math.random()}`;
    const listener = listenFor([key]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 20);
    const started = performance.now();
    await listener.wait(10_000, abort.signal);
    expect(performance.now() - started).toBeLessThan(1500);
    listener.close();
    listener.close(); // twice is harmless
    // A later wake-up reaches nobody, and a fresh listener does not see the earlier one. (On PostgreSQL the notice
    // comes back through the LISTEN connection a moment after NOTIFY: a listener registered before it lands is woken
    // by it, as it should be, so the test lets it land first.)
    await wake(key);
    const landing = listenFor([key]);
    await landing.wait(300);
    landing.close();
    const fresh = listenFor([key]);
    const t = performance.now();
    await fresh.wait(50);
    fresh.close();
    expect(performance.now() - t).toBeGreaterThanOrEqual(45);
  });
});
