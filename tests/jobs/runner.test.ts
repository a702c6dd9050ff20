import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as eventsRoute from '@/app/v1/preview/training-jobs/[training_job_id]/events/route';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import * as queue from '@/lib/jobs/server/queue';
import { runOneJob, TrainingError, type HandlerRegistry } from '@/lib/jobs/worker/runner';
import { call, createModel, createUser, type TestUser } from '../support/helpers';
import { claimOnly } from './claim-only';

async function submitRl(user: TestUser, modelId: string) {
  const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
    key: user.key,
    body: { model_id: modelId, trajectory_groups: [] },
  });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

async function events(user: TestUser, jobId: string) {
  const res = await call(eventsRoute, 'GET', '/x', {
    key: user.key,
    params: { training_job_id: jobId },
    query: { limit: 100 },
  });
  return res.body.data as { type: string; data: Record<string, unknown> }[];
}

async function job(user: TestUser, jobId: string) {
  return (await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } })).body;
}

const protocolFor = (modelId: string) => claimOnly(inProcessProtocol(`test:${modelId}`), modelId);

const weights = new Uint8Array([1, 2, 3, 4]);

describe('job runner', () => {
  it('runs a job: started, one gradient_step per sequence, checkpoint at step+1, then training_ended', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await submitRl(user, model.id);
    const handlers: HandlerRegistry = {
      rl: async (ctx) => {
        expect(ctx.job.base_checkpoint).toEqual({ step: 0, artifact_key: null });
        await ctx.started(3);
        for (let i = 1; i <= 3; i++) {
          // Each step takes a measurable time, so its step_seconds and tokens_per_second can be checked.
          await new Promise((r) => setTimeout(r, 30));
          await ctx.step({ loss: i, grad_norm: 0.5, num_trainable_tokens: 60 });
        }
        return { weights, metrics: { num_groups_submitted: 0 } };
      },
    };
    expect(await runOneJob(protocolFor(model.id), handlers)).toBe(true);

    const done = await job(user, jobId);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      step: 1,
      num_sequences: 3,
      completed_steps: 3,
      error_message: null,
    });
    const list = await events(user, jobId);
    expect(list.map((e) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'gradient_step',
      'gradient_step',
      'training_ended',
    ]);
    // Speed (issue 43 item 3): how long the job took to get going, and each step's duration and trained tokens/s.
    expect(Object.keys(list[0].data).sort()).toEqual(['load_seconds', 'num_sequences']);
    expect(list[0].data).toMatchObject({ num_sequences: 3 });
    expect(list[0].data.load_seconds).toBeGreaterThanOrEqual(0);
    expect(list[0].data.load_seconds).toBeLessThan(30);
    for (const step of list.slice(1, 4)) {
      const { step_seconds, tokens_per_second } = step.data as Record<string, number>;
      expect(step_seconds).toBeGreaterThanOrEqual(0.025);
      expect(step_seconds).toBeLessThan(10);
      expect(tokens_per_second).toBeCloseTo(60 / step_seconds, 6);
    }
    const cps = await call(checkpointsRoute, 'GET', '/x', {
      key: user.key,
      params: { model_id: model.id },
      query: { order: 'desc', limit: 1 },
    });
    expect(cps.body.data[0]).toMatchObject({
      step: 1,
      metrics: {
        'train/loss': 2,
        'train/grad_norm': 0.5,
        'train/num_gradient_steps': 3,
        'train/num_groups_submitted': 0,
      },
    });
  });

  it('numbers steps highest-ever + 1 even after the latest checkpoint was deleted', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const ok: HandlerRegistry = { rl: async (ctx) => (await ctx.started(0), { weights }) };
    await submitRl(user, model.id);
    await runOneJob(protocolFor(model.id), ok);
    await call(checkpointsRoute, 'DELETE', '/x', {
      key: user.key,
      params: { model_id: model.id },
      body: { steps: [1] },
    });
    const second = await submitRl(user, model.id);
    await runOneJob(protocolFor(model.id), ok);
    expect((await job(user, second)).step).toBe(2);
  });

  it('fails a job with the handler’s message and adds no checkpoint', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await submitRl(user, model.id);
    await runOneJob(protocolFor(model.id), {
      rl: async (ctx) => {
        await ctx.started(2);
        await ctx.step({ loss: 1 });
        throw new TrainingError('trajectory 3: token "x" is not in the vocabulary');
      },
    });
    const failed = await job(user, jobId);
    expect(failed).toMatchObject({
      status: 'FAILED',
      error_message: 'trajectory 3: token "x" is not in the vocabulary',
      step: null,
    });
    expect((await events(user, jobId)).map((e) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'training_failed',
    ]);
    const cps = await call(checkpointsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(cps.body.data.map((c: { step: number }) => c.step)).toEqual([0]);
  });

  it('cancels a running job: the handler is aborted and nothing follows training_failed', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await submitRl(user, model.id);
    await runOneJob(
      protocolFor(model.id),
      {
        rl: async (ctx) => {
          await ctx.started(100);
          await ctx.step({ loss: 1 });
          await queue.cancelJob(jobId);
          // The next heartbeat notices; the following step is refused.
          await new Promise((r) => setTimeout(r, 300));
          await ctx.step({ loss: 2 });
          return { weights };
        },
      },
      { heartbeatMs: 50 },
    );
    expect(await job(user, jobId)).toMatchObject({ status: 'FAILED', error_message: 'cancelled' });
    const list = await events(user, jobId);
    expect(list.map((e) => e.type)).toEqual(['training_started', 'gradient_step', 'training_failed']);
    // The terminal event every client knows, marked neutral for those that read `cancelled` (issue 41).
    expect(list[2].data).toEqual({ error_message: 'cancelled', cancelled: true });
  });

  it('runs the jobs of one model one at a time, in order', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const first = await submitRl(user, model.id);
    const second = await submitRl(user, model.id);
    const worker = `test:${model.id}`;
    expect((await protocolFor(model.id).claim())?.id).toBe(first);
    // While the first runs, the second is not runnable, by any worker.
    expect(await claimOnly(inProcessProtocol(`${worker}:b`), model.id).claim()).toBeNull();
    await queue.appendEvents(first, worker, [{ type: 'training_started', data: { num_sequences: 0 } }]);
    await queue.completeJob(first, worker, { artifactKey: null });
    expect((await claimOnly(inProcessProtocol(`${worker}:c`), model.id).claim())?.id).toBe(second);
  });

  it('enforces the event order clients rely on', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await submitRl(user, model.id);
    const worker = `test:${model.id}`;
    expect((await protocolFor(model.id).claim())?.id).toBe(jobId);
    await expect(queue.appendEvents(jobId, worker, [{ type: 'gradient_step', data: { loss: 1 } }])).rejects.toThrow(
      /before training_started/,
    );
    await queue.appendEvents(jobId, worker, [{ type: 'training_started', data: { num_sequences: 1 } }]);
    await expect(queue.appendEvents(jobId, worker, [{ type: 'gradient_step', data: { loss: 'x' } }])).rejects.toThrow(
      /finite numbers/,
    );
    await expect(queue.completeJob(jobId, worker, { artifactKey: null })).rejects.toThrow(/0 of 1 gradient steps/);
    await queue.appendEvents(jobId, worker, [{ type: 'gradient_step', data: { loss: 1 } }]);
    await expect(queue.appendEvents(jobId, worker, [{ type: 'gradient_step', data: { loss: 1 } }])).rejects.toThrow(
      /more gradient_step/,
    );
    await expect(queue.appendEvents(jobId, 'someone-else', [])).rejects.toThrow(/no longer holds/);
  });

  it('requeues a job whose worker vanished before its first step, and fails one that had taken a step', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const other = await createModel(user);
    const third = await createModel(user);
    const quiet = await submitRl(user, model.id);
    const started = await submitRl(user, other.id);
    const stepped = await submitRl(user, third.id);
    const dead = `builtin:deadboot${quiet.slice(0, 8)}:0`;
    expect((await queue.claimJob(dead, ['rl'], [model.id]))?.id).toBe(quiet);
    expect((await queue.claimJob(dead, ['rl'], [other.id]))?.id).toBe(started);
    expect((await queue.claimJob(dead, ['rl'], [third.id]))?.id).toBe(stepped);
    await queue.appendEvents(started, dead, [{ type: 'training_started', data: { num_sequences: 1 } }], 0);
    await queue.appendEvents(
      stepped,
      dead,
      [
        { type: 'training_started', data: { num_sequences: 2 } },
        { type: 'gradient_step', data: { loss: 1 } },
      ],
      0,
    );
    const outcome = await queue.recoverStaleJobs({ deadWorkerPrefix: { prefix: dead, except: 'builtin:alive' } });
    // At least these (on PostgreSQL the database is shared with other files, whose stale jobs are recovered too).
    expect(outcome.requeued).toBeGreaterThanOrEqual(2);
    expect(outcome.failed).toBeGreaterThanOrEqual(1);
    expect(await job(user, quiet)).toMatchObject({ status: 'QUEUED' });
    // Started but no step taken: nothing was learned, so it goes back to the queue (issue 43) …
    expect(await job(user, started)).toMatchObject({ status: 'QUEUED', error_message: null });
    const failed = await job(user, stepped);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toBe(
      'The training worker stopped responding (its process ended or lost contact); the job was stopped',
    );
    expect((await events(user, stepped)).map((e) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'training_failed',
    ]);

    // … and the next worker runs it to the end; its own training_started (seq 0) is not stored a second time.
    const handlers: HandlerRegistry = {
      rl: async (ctx) => {
        await ctx.started(1);
        await ctx.step({ loss: 0.5 });
        return { weights, metrics: {} };
      },
    };
    expect(await runOneJob(claimOnly(inProcessProtocol('test:second'), other.id), handlers)).toBe(true);
    expect(await job(user, started)).toMatchObject({ status: 'COMPLETED', completed_steps: 1 });
    expect((await events(user, started)).map((e) => e.type)).toEqual([
      'training_started',
      'gradient_step',
      'training_ended',
    ]);
  });

  it(`fails a job that lost its worker ${queue.MAX_JOB_ATTEMPTS} times before its first step, saying so`, async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await submitRl(user, model.id);
    for (let attempt = 1; attempt <= queue.MAX_JOB_ATTEMPTS; attempt++) {
      const dead = `builtin:crashes${jobId.slice(0, 8)}${attempt}:0`;
      expect((await queue.claimJob(dead, ['rl'], [model.id]))?.id).toBe(jobId);
      await queue.recoverStaleJobs({ deadWorkerPrefix: { prefix: dead, except: 'builtin:alive' } });
    }
    const failed = await job(user, jobId);
    expect(failed.status).toBe('FAILED');
    expect(failed.error_message).toBe(
      `The training worker stopped responding ${queue.MAX_JOB_ATTEMPTS} times before the first step (its process ended or lost contact); the job was stopped`,
    );
  });
});

describe('job input', () => {
  it('fails an SFT job with the precise reason when its dataset has vanished from the store', async () => {
    const { storeDataset } = await import('@/lib/services/datasets');
    const { principalFromApiKey } = await import('@/lib/services/accounts');
    const { deleteArtifacts } = await import('@/lib/storage');
    const sftRoute = await import('@/app/v1/preview/sft-training-jobs/route');
    const user = await createUser();
    const model = await createModel(user);
    const line = JSON.stringify({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
    });
    const dataset = await storeDataset((await principalFromApiKey(user.key))!, {
      project: 'p',
      name: 'd',
      files: { 'train.jsonl': line },
    });
    const created = await call(sftRoute, 'POST', '/x', {
      key: user.key,
      body: { model_id: model.id, training_data_url: dataset.training_data_url },
    });
    await deleteArtifacts(`datasets`);
    await runOneJob(protocolFor(model.id), { sft: async () => ({ weights }) });
    expect(await job(user, created.body.id)).toMatchObject({
      status: 'FAILED',
      error_message: 'train.jsonl: the training data file is missing from the artifact store',
    });
  });
});
