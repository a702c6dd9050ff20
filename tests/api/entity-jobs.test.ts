import { describe, expect, it } from 'vitest';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as jobsRoute from '@/app/v1/preview/training-jobs/route';
import { entityJobListSchema } from '@/lib/schemas/training-jobs';
import { call, createModel, createRlJob, createUser, type TestUser } from '../support/helpers';

/** An SFT job on a one-example dataset stored directly (no upload), left queued. */
async function sftJob(user: TestUser, modelId: string): Promise<string> {
  const { storeDataset } = await import('@/lib/services/datasets');
  const { principalFromApiKey } = await import('@/lib/services/accounts');
  const sftRoute = await import('@/app/v1/preview/sft-training-jobs/route');
  const line = JSON.stringify({
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ],
  });
  const dataset = await storeDataset((await principalFromApiKey(user.key))!, {
    project: 'data',
    name: 'one',
    files: { 'train.jsonl': line },
  });
  const created = await call(sftRoute, 'POST', '/x', {
    key: user.key,
    body: { model_id: modelId, training_data_url: dataset.training_data_url },
  });
  expect(created.status).toBe(200);
  return created.body.id as string;
}

function list(user: TestUser, query: Record<string, string | number | undefined> = {}) {
  return call(jobsRoute, 'GET', '/v1/preview/training-jobs', { key: user.key, query });
}

describe('the entity-wide jobs list (dashboard extension)', () => {
  it('lists every model’s jobs newest first with the model’s name, active ones on request, cancels as cancelled', async () => {
    const user = await createUser();
    const a = await createModel(user, { project: 'alpha', name: 'first' });
    const b = await createModel(user, { project: 'beta', name: 'second' });
    const j1 = await createRlJob(user, a.id);
    const j2 = await createRlJob(user, b.id);
    const j3 = await createRlJob(user, a.id);
    const cancelled = await call(cancelRoute, 'POST', `/v1/preview/training-jobs/${j2}/cancel`, {
      key: user.key,
      params: { training_job_id: j2 },
    });
    expect(cancelled.status).toBe(200);

    const all = await list(user);
    expect(all.status).toBe(200);
    const page = entityJobListSchema.parse(all.body);
    expect(page.data.map((j) => j.id)).toEqual([j3, j2, j1]);
    expect(page.data[1]).toMatchObject({
      status: 'FAILED',
      cancelled: true,
      model: { id: b.id, entity: user.handle, project: 'beta', name: 'second' },
    });
    expect(page.data[0]).toMatchObject({ status: 'QUEUED', cancelled: false, model: { name: 'first' } });

    // The job itself says it was cancelled too; its status stays what clients of the interface expect.
    const one = await call(jobRoute, 'GET', `/v1/preview/training-jobs/${j2}`, {
      key: user.key,
      params: { training_job_id: j2 },
    });
    expect(one.body).toMatchObject({ status: 'FAILED', cancelled: true });

    const active = entityJobListSchema.parse((await list(user, { active: 'true' })).body);
    expect(active.data.map((j) => j.id).sort()).toEqual([j1, j3].sort());
    const failed = entityJobListSchema.parse((await list(user, { status: 'FAILED' })).body);
    expect(failed.data.map((j) => j.id)).toEqual([j2]);

    const first = entityJobListSchema.parse((await list(user, { limit: 2 })).body);
    expect(first.has_more).toBe(true);
    const next = entityJobListSchema.parse((await list(user, { limit: 2, after: first.data[1].id })).body);
    expect(next.data.map((j) => j.id)).toEqual([j1]);
    expect(next.has_more).toBe(false);
  });

  it("gives each job the speed of its latest gradient step (issue 43 item 3: the Jobs page's speed)", async () => {
    const queue = await import('@/lib/jobs/server/queue');
    const user = await createUser();
    const model = await createModel(user);
    const older = await createRlJob(user, model.id);
    const worker = `speed-${model.id}`;
    expect((await queue.claimJob(worker, ['rl'], [model.id]))?.id).toBe(older);
    await queue.appendEvents(older, worker, [
      { type: 'training_started', data: { num_sequences: 3, load_seconds: 1.5 } },
      {
        type: 'gradient_step',
        data: { loss: 1, num_trainable_tokens: 100, step_seconds: 0.5, tokens_per_second: 200 },
      },
      {
        type: 'gradient_step',
        data: { loss: 1, num_trainable_tokens: 90, step_seconds: 0.25, tokens_per_second: 360 },
      },
      // From a worker that reports no speed: the job's speed is unknown, not a stale earlier value.
    ]);
    const started = await createRlJob(user, (await createModel(user)).id);
    const queued = await createRlJob(user, model.id);
    const page = entityJobListSchema.parse((await list(user)).body);
    const byId = new Map(page.data.map((j) => [j.id, j]));
    expect(byId.get(older)!.speed).toEqual({ step_seconds: 0.25, tokens_per_second: 360 });
    expect(byId.get(started)!.speed).toBeNull();
    expect(byId.get(queued)!.speed).toBeNull();
    await queue.appendEvents(older, worker, [{ type: 'gradient_step', data: { loss: 1 } }]);
    const after = entityJobListSchema.parse((await list(user)).body);
    expect(after.data.find((j) => j.id === older)!.speed).toBeNull();
  });

  it('keeps other people’s jobs out and refuses bad filters', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const job = await createRlJob(owner, model.id);
    expect(entityJobListSchema.parse((await list(stranger)).body).data).toEqual([]);
    expect(entityJobListSchema.parse((await list(stranger, { entity: owner.handle })).body).data).toEqual([]);
    expect((await list(stranger, { after: job })).status).toBe(422);
    expect((await list(owner, { status: 'DONE' })).status).toBe(422);
    expect((await list(owner, { active: 'yes' })).status).toBe(422);
    expect((await list(owner, { active: 'true', after: job })).status).toBe(422);
    expect((await list(owner, { limit: 0 })).status).toBe(422);
    const badModel = await list(owner, { model_id: 'not-a-uuid' });
    expect(badModel.status).toBe(422);
    expect(badModel.body.detail[0].loc).toEqual(['query', 'model_id']);
    expect((await list(owner, { kind: 'ppo' })).status).toBe(422);
    expect((await list(owner, { q: 'x'.repeat(201) })).status).toBe(422);
  });

  it('filters by model, project, kind and status, and searches names, projects and ids', async () => {
    const user = await createUser();
    const a = await createModel(user, { project: 'alpha', name: 'math-tutor' });
    const b = await createModel(user, { project: 'beta', name: 'code_helper' });
    const rlA = await createRlJob(user, a.id);
    const rlB = await createRlJob(user, b.id);
    const sftB = await sftJob(user, b.id);
    const ids = async (query: Record<string, string>) =>
      entityJobListSchema.parse((await list(user, query)).body).data.map((j) => j.id);
    expect(await ids({ model_id: a.id })).toEqual([rlA]);
    expect(await ids({ project: 'beta' })).toEqual([sftB, rlB]);
    expect(await ids({ kind: 'sft' })).toEqual([sftB]);
    expect(await ids({ kind: 'rl', project: 'beta' })).toEqual([rlB]);
    expect(await ids({ q: 'MATH' })).toEqual([rlA]);
    expect(await ids({ q: 'alph' })).toEqual([rlA]);
    expect(await ids({ q: rlB.slice(0, 8) })).toEqual([rlB]);
    // LIKE's wildcards are searched as text: '_' matches only an underscore.
    expect(await ids({ q: 'code_' })).toEqual([sftB, rlB]);
    expect(await ids({ q: 'math_' })).toEqual([]);
    expect(await ids({ q: '%' })).toEqual([]);
    expect(await ids({ q: '   ' })).toEqual([sftB, rlB, rlA]);
    expect(await ids({ model_id: b.id, status: 'QUEUED', kind: 'sft' })).toEqual([sftB]);
  });
});
