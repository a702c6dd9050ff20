import { describe, expect, it } from 'vitest';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { parkedClaims, RECHECK_MS } from '@/lib/jobs/server/claim-wakeups';
import { claimResponseSchema } from '@/lib/schemas/workers';
import { NEW_CLIENT_KEY, wake as wakeTinker } from '@/lib/jobs/server/tinker-wakeups';
import { createModel, createRlJob, createUser, until, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';

// Long-polled claims (lib/jobs/README.md "Worker protocol"): a parked claim answers as soon as a job can be claimed, ends with its
// client, answers null at its bound, and a claim without wait_seconds answers at once as before.

const headers = { authorization: `Bearer ${bootWorkerToken()}`, 'content-type': 'application/json' };

async function claim(body: Record<string, unknown>, signal?: AbortSignal) {
  const res = await routeFetch('http://localhost/v1/workers/claim', {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return claimResponseSchema.parse(JSON.parse(text)).job;
}

async function setup(): Promise<{ user: TestUser; modelId: string }> {
  const user = await createUser();
  const model = await createModel(user);
  return { user, modelId: model.id };
}

describe('long-polled claims', () => {
  it('wakes a parked claim when a job is queued, well before the next re-check', async () => {
    const { user, modelId } = await setup();
    const before = parkedClaims();
    const t0 = Date.now();
    const parked = claim({ worker_id: 'lp-wake', model_ids: [modelId], wait_seconds: 20 });
    expect(await until(async () => parkedClaims() > before, 5000)).toBe(true);
    const created = Date.now();
    const jobId = await createRlJob(user, modelId);
    const job = await parked;
    const latency = Date.now() - created;
    expect(job?.id).toBe(jobId);
    // The old worker loop found a job 250 ms to 2 s after it was queued, a parked claim's own re-check comes every
    // RECHECK_MS: the wake-up must beat both by far. (Loose for a loaded CI machine; typically a few ms.)
    expect(latency).toBeLessThan(Math.min(RECHECK_MS, 1000));
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(parkedClaims()).toBe(before);
  });

  it('leaves no listener behind when the worker goes away while its claim is parked', async () => {
    const { modelId } = await setup();
    const before = parkedClaims();
    const gone = new AbortController();
    const parked = claim({ worker_id: 'lp-abort', model_ids: [modelId], wait_seconds: 20 }, gone.signal).catch(
      () => 'aborted',
    );
    expect(await until(async () => parkedClaims() > before, 5000)).toBe(true);
    const t0 = Date.now();
    gone.abort();
    await parked;
    // The route's wait ends with the request, not at its bound or the next re-check.
    expect(await until(async () => parkedClaims() === before, 1000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('answers null at the bound when nothing can be claimed', async () => {
    const { modelId } = await setup();
    const before = parkedClaims();
    const t0 = Date.now();
    expect(await claim({ worker_id: 'lp-empty', model_ids: [modelId], wait_seconds: 1.5 })).toBeNull();
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(1500 + RECHECK_MS);
    expect(parkedClaims()).toBe(before);
  });

  it('answers at once without wait_seconds (older workers)', async () => {
    const { modelId } = await setup();
    const t0 = Date.now();
    expect(await claim({ worker_id: 'lp-old', model_ids: [modelId] })).toBeNull();
    expect(Date.now() - t0).toBeLessThan(1000);
    const zero = Date.now();
    expect(await claim({ worker_id: 'lp-zero', model_ids: [modelId], wait_seconds: 0 })).toBeNull();
    expect(Date.now() - zero).toBeLessThan(1000);
  });

  it('refuses a negative wait_seconds with a 422 naming it', async () => {
    const res = await routeFetch('http://localhost/v1/workers/claim', {
      method: 'POST',
      headers,
      body: JSON.stringify({ worker_id: 'lp-bad', wait_seconds: -1 }),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('wait_seconds');
  });

  it("ends a Tinker worker's parked claim when a new training client waits, so it polls for it", async () => {
    const { modelId } = await setup();
    const before = parkedClaims();
    const parked = claim({
      worker_id: 'lp-tinker',
      kinds: ['rl', 'sft', 'tinker'],
      capabilities: { backends: ['hf'] },
      model_ids: [modelId],
      wait_seconds: 20,
    });
    expect(await until(async () => parkedClaims() > before, 5000)).toBe(true);
    const t0 = Date.now();
    await wakeTinker(NEW_CLIENT_KEY);
    expect(await parked).toBeNull();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(parkedClaims()).toBe(before);
  });

  it('keeps a parked worker live in the registry', async () => {
    const { modelId } = await setup();
    const parked = claim({ worker_id: 'lp-live', model_ids: [modelId], wait_seconds: 1 });
    const { getDb } = await import('@/lib/db/client');
    const workersRepo = await import('@/lib/db/repositories/training-workers');
    const db = await getDb();
    // Recorded by the claim's first attempt, while it is still parked.
    expect(await until(async () => (await workersRepo.findWorker(db, 'lp-live')) !== undefined, 1000)).toBe(true);
    const seen = (await workersRepo.findWorker(db, 'lp-live'))!.lastSeenAt.getTime();
    expect(await parked).toBeNull();
    // Within the registry's live window (60 s) the whole time: the claim re-records it every 15 s while parked.
    expect(Date.now() - seen).toBeLessThan(60_000);
  });
});
