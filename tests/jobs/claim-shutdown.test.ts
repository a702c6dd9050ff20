import { describe, expect, it } from 'vitest';
import { parkedClaims, stopParkedClaims } from '@/lib/jobs/server/claim-wakeups';
import { claimJob } from '@/lib/jobs/server/queue';
import { createModel, createUser, until } from '../support/helpers';

// In a process of its own (vitest.config.mts ISOLATED_FILES): once stopped, no claim of this process parks again.
describe('a stopping server', () => {
  it('answers parked claims at once and parks no new one, so no worker holds it open', async () => {
    const model = await createModel(await createUser());
    const parked = claimJob('stop-1', ['rl'], [model.id], undefined, undefined, { waitSeconds: 20 });
    expect(await until(async () => parkedClaims() === 1, 5000)).toBe(true);
    const t0 = Date.now();
    stopParkedClaims();
    expect(await parked).toBeNull();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(parkedClaims()).toBe(0);
    const later = Date.now();
    expect(await claimJob('stop-2', ['rl'], [model.id], undefined, undefined, { waitSeconds: 20 })).toBeNull();
    expect(Date.now() - later).toBeLessThan(1000);
  });
});
