import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as signInRoute from '@/app/v1/auth/sign-in/route';
import * as signUpRoute from '@/app/v1/auth/sign-up/route';
import { call, createUser, uniqueName } from '../support/helpers';

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * Account enumeration by timing: an unknown email must cost what a known one costs (one scrypt run each).
 * The fastest of several interleaved runs is compared, which a loaded machine slows least.
 */
describe('sign-in timing does not reveal whether an email has an account', () => {
  it('takes as long for an unknown email as for a wrong password', async () => {
    const user = await createUser();
    const attempt = (email: string) => () =>
      call(signInRoute, 'POST', '/v1/auth/sign-in', {
        body: { email, password: 'wrong password!' },
        // An address of its own per attempt: a shared one could meet another test's per-address limit.
        headers: { 'x-forwarded-for': `2001:db8:e::${randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}` },
      });
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      unknown.push(await timed(attempt(`${uniqueName('nobody-')}@example.test`)));
      known.push(await timed(attempt(user.email)));
    }
    const ratio = Math.min(...unknown) / Math.min(...known);
    expect(ratio, `unknown ${unknown.map(Math.round)} ms, known ${known.map(Math.round)} ms`).toBeLessThan(1.5);
    expect(ratio).toBeGreaterThan(1 / 1.5);
  }, 60_000);

  it('hashes before refusing a taken email at sign-up, so a conflict is no faster than an account creation', async () => {
    const user = await createUser();
    const takenEmail = await timed(() =>
      call(signUpRoute, 'POST', '/v1/auth/sign-up', { body: { email: user.email, password: 'another long password' } }),
    );
    const wrongPassword = await timed(() =>
      call(signInRoute, 'POST', '/v1/auth/sign-in', { body: { email: user.email, password: 'wrong password!' } }),
    );
    // Without hashing, the conflict answers in a few ms; a scrypt run takes tens of ms.
    expect(takenEmail).toBeGreaterThan(wrongPassword * 0.6);
  }, 60_000);
});
