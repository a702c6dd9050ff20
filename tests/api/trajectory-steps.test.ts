import { describe, expect, it } from 'vitest';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as stepsRoute from '@/app/v1/preview/models/[model_id]/trajectory-steps/route';
import { trajectoryStepListSchema } from '@/lib/schemas/trajectories';
import { call, createModel, createRlJob, createUser, seedCheckpoints, type TestUser } from '../support/helpers';

const traj = (reward: number) => ({
  messages_and_choices: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ],
  reward,
});
const group = (...rewards: number[]) => ({ trajectories: rewards.map(traj) });

async function log(user: TestUser, modelId: string, split: string, groups: unknown[]) {
  const res = await call(logRoute, 'POST', `/v1/preview/models/${modelId}/log`, {
    key: user.key,
    params: { model_id: modelId },
    body: { split, trajectory_groups: groups },
  });
  expect(res.status).toBe(200);
}

async function steps(user: TestUser, modelId: string, query: Record<string, string | number> = {}) {
  const res = await call(stepsRoute, 'GET', `/v1/preview/models/${modelId}/trajectory-steps`, {
    key: user.key,
    params: { model_id: modelId },
    query,
  });
  return res;
}

describe('GET /v1/preview/models/{model_id}/trajectory-steps', () => {
  it('lists the steps with trajectories newest first, with counts and per-trajectory rewards per split', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await log(user, model.id, 'val', [group(1, 0)]);
    // An empty group counts as a group without trajectories and without a reward.
    await log(user, model.id, 'train', [group(0.5, 0.5, 0.5), group()]);
    await seedCheckpoints(model.id, [2]);
    await log(user, model.id, 'val', [group(0.2, 0.4)]);
    await seedCheckpoints(model.id, [5]);
    await createRlJob(user, model.id, { trajectory_groups: [group(1, 0), group(0, 0.5)] });

    const all = await steps(user, model.id);
    expect(all.status).toBe(200);
    const list = trajectoryStepListSchema.parse(all.body);
    expect(list.has_more).toBe(false);
    expect(list.data.map((s) => s.step)).toEqual([5, 2, 0]);
    expect(list.data[2]).toEqual({
      step: 0,
      groups: 3,
      trajectories: 5,
      reward_mean: 0.5,
      reward_min: 0,
      reward_max: 1,
      sources: ['log'],
      splits: [
        { split: 'train', groups: 2, trajectories: 3, reward_mean: 0.5 },
        { split: 'val', groups: 1, trajectories: 2, reward_mean: 0.5 },
      ],
    });
    expect(list.data[0]).toMatchObject({ step: 5, groups: 2, trajectories: 4, reward_mean: 0.375, sources: ['train'] });
    expect(list.data[1].reward_mean).toBeCloseTo(0.3, 10);

    // Paged by step: `before` is the last step of the previous page.
    const first = trajectoryStepListSchema.parse((await steps(user, model.id, { limit: 2 })).body);
    expect(first.data.map((s) => s.step)).toEqual([5, 2]);
    expect(first.has_more).toBe(true);
    const second = trajectoryStepListSchema.parse((await steps(user, model.id, { limit: 2, before: 2 })).body);
    expect(second.data.map((s) => s.step)).toEqual([0]);
    expect(second.has_more).toBe(false);

    const val = trajectoryStepListSchema.parse((await steps(user, model.id, { split: 'val' })).body);
    expect(val.data.map((s) => [s.step, s.groups])).toEqual([
      [2, 1],
      [0, 1],
    ]);
    const trained = trajectoryStepListSchema.parse((await steps(user, model.id, { source: 'train' })).body);
    expect(trained.data.map((s) => s.step)).toEqual([5]);
  });

  it('is empty for a model without trajectories, 422 on a bad cursor, 404 for a model of someone else', async () => {
    const user = await createUser();
    const model = await createModel(user);
    expect((await steps(user, model.id)).body).toEqual({ object: 'list', data: [], has_more: false });
    const bad = await steps(user, model.id, { before: 'abc' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'before']);
    const stranger = await createUser();
    const hidden = await steps(stranger, model.id);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ detail: 'Model not found' });
  });
});
