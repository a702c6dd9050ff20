import { describe, expect, it } from 'vitest';
import * as claimRoute from '@/app/v1/workers/claim/route';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import { httpProtocol } from '@/lib/jobs/worker/http-protocol';
import { runOneJob } from '@/lib/jobs/worker/runner';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { readArtifactBytes } from '@/lib/storage';
import { call, createModel, createUser } from '../helpers';
import { routeFetch } from '../route-fetch';
import { claimOnly } from './claim-only';

describe('worker protocol over HTTP', () => {
  it('refuses user keys and missing tokens on worker routes', async () => {
    const user = await createUser();
    expect((await call(claimRoute, 'POST', '/v1/workers/claim', { body: { worker_id: 'w' } })).status).toBe(401);
    expect(
      (await call(claimRoute, 'POST', '/v1/workers/claim', { key: user.key, body: { worker_id: 'w' } })).status,
    ).toBe(401);
  });

  it('runs a job end to end through the HTTP routes, including checkpoint upload and base weights', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const submit = async () =>
      (
        await routeFetch('http://localhost/v1/preview/training-jobs', {
          method: 'POST',
          headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model_id: model.id,
            trajectory_groups: [{ trajectories: [{ messages_and_choices: [], reward: 1 }] }],
          }),
        })
      ).json();
    const first = await submit();
    const protocol = httpProtocol({
      baseUrl: 'http://localhost',
      token: bootWorkerToken(),
      workerId: `http-test:${first.id}`,
      fetchImpl: routeFetch,
    });
    const trained = new Uint8Array([9, 8, 7, 6, 5]);
    await runOneJob(claimOnly(protocol, model.id), {
      rl: async (ctx) => {
        expect(ctx.baseWeights).toBeNull();
        expect(ctx.input).toMatchObject({ kind: 'rl', trajectory_groups: [{ trajectories: [{ reward: 1 }] }] });
        await ctx.started(1);
        await ctx.step({ loss: 0.25 });
        return { weights: trained };
      },
    });
    const job = await (
      await routeFetch(`http://localhost/v1/preview/training-jobs/${first.id}`, {
        headers: { authorization: `Bearer ${user.key}` },
      })
    ).json();
    expect(job).toMatchObject({ status: 'COMPLETED', step: 1 });
    expect(await readArtifactBytes(`models/${model.id}/checkpoints/${first.id}/model.safetensors`)).toEqual(trained);

    // The next job trains from step 1's weights, fetched over the protocol.
    const second = await submit();
    await runOneJob(claimOnly(protocol, model.id), {
      rl: async (ctx) => {
        expect(ctx.baseWeights).toEqual(trained);
        await ctx.started(0);
        return { weights: ctx.baseWeights! };
      },
    });
    const cancelled = await call(cancelRoute, 'POST', '/x', { key: user.key, params: { training_job_id: second.id } });
    expect(cancelled.body).toMatchObject({ status: 'COMPLETED', step: 2 });
  });

  it('cancels a queued job for its owner only', async () => {
    const user = await createUser();
    const stranger = await createUser();
    const model = await createModel(user);
    const res = await routeFetch('http://localhost/v1/preview/training-jobs', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model_id: model.id, trajectory_groups: [] }),
    });
    const { id } = await res.json();
    expect((await call(cancelRoute, 'POST', '/x', { key: stranger.key, params: { training_job_id: id } })).status).toBe(
      404,
    );
    const cancelled = await call(cancelRoute, 'POST', '/x', { key: user.key, params: { training_job_id: id } });
    expect(cancelled.body).toMatchObject({ status: 'FAILED', error_message: 'cancelled' });
  });
});
