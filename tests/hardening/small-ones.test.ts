import { afterEach, describe, expect, it, vi } from 'vitest';
import * as signUpRoute from '@/app/v1/auth/sign-up/route';
import * as tokenRoute from '@/app/v1/auth/token/route';
import * as modelsRoute from '@/app/v1/preview/models/route';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import { httpProtocol } from '@/lib/jobs/worker/http-protocol';
import { runOneJob } from '@/lib/jobs/worker/runner';
import { bootWorkerToken } from '@/lib/jobs/server/worker-token';
import { call, createModel, createRlJob, createUser, uniqueName } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';
import { claimOnly } from '../jobs/claim-only';

afterEach(() => vi.restoreAllMocks());

describe('small hardening findings', () => {
  it('a training_data_url version past the integer range is a 422, not a 500', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: { model_id: model.id, training_data_url: `wandb-artifact:///${user.handle}/p/d:v99999999999999999999` },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'training_data_url']);
  });

  it("a worker's complete must name the artifact key the server assigned to that job", async () => {
    const user = await createUser();
    const victim = await createUser();
    const victimModel = await createModel(victim);
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    const protocol = httpProtocol({
      baseUrl: 'http://localhost',
      token: bootWorkerToken(),
      workerId: `w:${jobId}`,
      fetchImpl: routeFetch,
    });
    const forged = `models/${victimModel.id}/checkpoints/00000000-0000-4000-8000-000000000000/model.safetensors`;
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await runOneJob(
      {
        ...claimOnly(protocol, model.id),
        complete: (id, result) => protocol.complete(id, { ...result, artifactKey: forged }),
      },
      { rl: async () => ({ weights: new Uint8Array([1, 2, 3]) }) },
    );
    errors.mockRestore();
    const job = await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } });
    expect(job.body.status).toBe('FAILED');
    expect(job.body.step ?? null).toBeNull();
  });

  it('422 answers never echo a submitted password', async () => {
    const secret = 'hunter2';
    const signUp = await call(signUpRoute, 'POST', '/v1/auth/sign-up', {
      body: { email: `${uniqueName('p-')}@example.test`, password: secret },
    });
    expect(signUp.status).toBe(422);
    expect(JSON.stringify(signUp.body)).not.toContain(secret);
    const token = await call(tokenRoute, 'POST', '/v1/auth/token', {
      body: { email: 'not-an-email', password: 'my real password 123', key_name: 'k' },
    });
    expect(token.status).toBe(422);
    expect(JSON.stringify(token.body)).not.toContain('my real password 123');
    const wrongShape = await call(tokenRoute, 'POST', '/v1/auth/token', {
      body: { email: 'a@b.c', password: 12345678901, key_name: 'k' },
    });
    expect(wrongShape.status).toBe(422);
    expect(JSON.stringify(wrongShape.body)).not.toContain('12345678901');
  });

  it('a password of only spaces is refused', async () => {
    const res = await call(signUpRoute, 'POST', '/v1/auth/sign-up', {
      body: { email: `${uniqueName('p-')}@example.test`, password: '        ' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'password']);
  });

  it('a client that disconnects mid-body is not logged as an unhandled error', async () => {
    const user = await createUser();
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"project":"p",'));
        controller.error(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
    const res = await modelsRoute.POST(
      new Request('http://localhost:3000/v1/preview/models', {
        method: 'POST',
        body,
        headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
        duplex: 'half',
      } as RequestInit),
      { params: Promise.resolve({}) },
    );
    expect(res.status).toBe(400);
    expect(errors.mock.calls.some((args) => String(args[0]).includes('unhandled error'))).toBe(false);
  });

  it('every response carries the security headers (no framing, nosniff, referrer policy)', async () => {
    // @ts-expect-error next.config.mjs is plain JavaScript without a declaration file
    const nextConfig = (await import('@/next.config.mjs')).default as {
      headers?: () => Promise<{ source: string; headers: { key: string; value: string }[] }[]>;
    };
    const rules = (await nextConfig.headers?.()) ?? [];
    const all = rules.find((r) => r.source === '/:path*');
    const headers = Object.fromEntries((all?.headers ?? []).map((h) => [h.key.toLowerCase(), h.value]));
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  });
});
