import { describe, expect, it } from 'vitest';
import * as claimRoute from '@/app/v1/workers/claim/route';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import type { WorkerProtocol } from '@/lib/jobs/protocol';
import { httpProtocol, WorkerAnswerError } from '@/lib/jobs/worker/http-protocol';
import { runOneJob, runWorkerLoop, WorkerTokenRefusedError } from '@/lib/jobs/worker/runner';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { readArtifactBytes } from '@/lib/storage';
import { call, createModel, createUser } from '../support/helpers';
import { fastPathFetch as routeFetch } from '../support/route-fetch';
import { claimOnly } from './claim-only';

describe('worker protocol over HTTP', () => {
  it("parses every answer with its route's schema: a 2xx answer off the contract is an error naming the field", async () => {
    const answering =
      (body: string): typeof fetch =>
      async () =>
        new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    const protocol = (body: string) =>
      httpProtocol({ baseUrl: 'http://localhost', token: 't', workerId: 'w', fetchImpl: answering(body) });
    // A job without its kind (a server of another version): not run on half-read data.
    const job = { id: '00000000-0000-4000-8000-000000000000', model_id: '00000000-0000-4000-8000-000000000001' };
    await expect(protocol(JSON.stringify({ job })).claim()).rejects.toThrow(
      /POST \/v1\/workers\/claim answered something other than its contract: job\.kind: /,
    );
    await expect(protocol(JSON.stringify({ cancelled: 'no' })).heartbeat('j')).rejects.toBeInstanceOf(
      WorkerAnswerError,
    );
    await expect(protocol('<html>proxy error</html>').complete('j', { artifactKey: 'k' })).rejects.toThrow(
      'POST /v1/workers/jobs/j/complete answered something other than its contract: not JSON: <html>proxy error</html>',
    );
    await expect(
      protocol(JSON.stringify({ kind: 'sft', file: 'f', examples: [{ line: 1 }] })).input('j'),
    ).rejects.toThrow(
      /GET \/v1\/workers\/jobs\/j\/input answered something other than its contract: examples\.0\.messages: /,
    );
    // The contract's own answers pass: an SFT input from an older server gets its empty validation set.
    const input = await protocol(JSON.stringify({ kind: 'sft', file: 'f', examples: [] })).input('j');
    expect(input).toEqual({ kind: 'sft', file: 'f', examples: [], validation: [] });
  });

  it('refuses user keys and missing tokens on worker routes', async () => {
    const user = await createUser();
    expect((await call(claimRoute, 'POST', '/v1/workers/claim', { body: { worker_id: 'w' } })).status).toBe(401);
    expect(
      (await call(claimRoute, 'POST', '/v1/workers/claim', { key: user.key, body: { worker_id: 'w' } })).status,
    ).toBe(401);
  });

  it('stops a worker whose token the server refuses, and keeps polling a server that is down', async () => {
    let claims = 0;
    const counting: typeof fetch = (input, init) => {
      claims++;
      return routeFetch(input, init);
    };
    const refused = httpProtocol({
      baseUrl: 'http://localhost',
      token: 'tbw_wrong',
      workerId: 'w',
      fetchImpl: counting,
    });
    const stop = new AbortController();
    const loop = runWorkerLoop(
      refused,
      { rl: async () => ({ weights: new Uint8Array() }) },
      { signal: stop.signal, idleMs: 1 },
    );
    const timer = setTimeout(() => stop.abort(), 5000);
    await expect(loop).rejects.toBeInstanceOf(WorkerTokenRefusedError);
    clearTimeout(timer);
    // Once, not retried: a 4xx is final, and the loop does not claim again.
    expect(claims).toBe(1);
    await expect(loop).rejects.toThrow(/refused the worker token \(401\).*TUNEBOARD_WORKER_TOKEN/);

    // A server that cannot be reached (restarting) is not a refusal: the loop polls on until stopped. (A stub
    // protocol: the HTTP one first retries for seconds with backoff.)
    // Stopped by its third failed claim, not after a fixed time: on a loaded machine a 100 ms window once held
    // a single poll.
    let down = 0;
    const polling = new AbortController();
    const unreachable = {
      claim: async () => {
        if (++down === 3) polling.abort();
        throw new TypeError('fetch failed (ECONNREFUSED)');
      },
    } as unknown as WorkerProtocol;
    const loop2 = runWorkerLoop(unreachable, {}, { signal: polling.signal, idleMs: 20, maxIdleMs: 20 });
    await expect(loop2).resolves.toBeUndefined();
    expect(down).toBe(3);
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

    // Stopping cleanly (worker-main.ts after its loop), it signs off: the registry no longer lists it.
    const listed = async () => {
      const res = await routeFetch('http://localhost/v1/preview/training-workers', {
        headers: { authorization: `Bearer ${user.key}` },
      });
      return ((await res.json()) as { data: { id: string }[] }).data.some((w) => w.id === protocol.workerId);
    };
    expect(await listed()).toBe(true);
    await protocol.signOff!();
    expect(await listed()).toBe(false);
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
