import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import { logResponseSchema } from '@/lib/schemas/trajectories';
import { call, createModel, createUser, type TestUser } from '../helpers';

const traj = (reward?: number, metrics: Record<string, number> = {}) => ({
  messages_and_choices: [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'a' },
  ],
  ...(reward === undefined ? {} : { reward }),
  metrics,
});

async function log(user: TestUser, modelId: string, trajectory_groups: unknown[], split = 'val') {
  const res = await call(logRoute, 'POST', '/x', {
    key: user.key,
    params: { model_id: modelId },
    body: { split, trajectory_groups },
  });
  expect(res.status).toBe(200);
  return logResponseSchema.parse(res.body);
}

async function step0Metrics(user: TestUser, modelId: string) {
  const res = await call(checkpointsRoute, 'GET', '/x', { key: user.key, params: { model_id: modelId } });
  return res.body.data[0].metrics as Record<string, number>;
}

/**
 * The reference client (ART) always sends a reward: its Trajectory model requires one. A trajectory without
 * a reward is therefore unscored, never scored 0; and several logs to one step describe all their trajectories.
 */
describe('/log semantics', () => {
  it("a log without rewards writes no reward and leaves the step's val/reward as it was", async () => {
    const user = await createUser();
    const model = await createModel(user);
    await log(user, model.id, [{ trajectories: [traj(1), traj(0.5)] }]);
    const unscored = await log(user, model.id, [{ trajectories: [traj(undefined, { len: 3 })] }]);
    // The answer describes the step's whole pool: the first log's rewards, not a 0 for the unscored one.
    expect(unscored.metrics['val/reward']).toBe(0.75);
    const metrics = await step0Metrics(user, model.id);
    expect(metrics['val/reward']).toBe(0.75);
    expect(metrics['val/len']).toBe(3);
  });

  it('averages the reward over the trajectories that have one', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, [{ trajectories: [traj(1), traj(undefined), traj(0)] }]);
    expect(res.metrics['val/reward']).toBe(0.5);
    expect(res.metrics['val/reward_std_dev']).toBe(0.5);
  });

  it('two logs to one step pool their trajectories instead of blending their keys', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await log(user, model.id, [{ trajectories: [traj(1, { acc: 1 }), traj(1, { acc: 1 })] }]);
    const second = await log(user, model.id, [{ trajectories: [traj(0), traj(0)] }]);
    // Every val/* key describes all four trajectories (acc: only the two that reported it).
    expect(second.metrics).toMatchObject({ 'val/reward': 0.5, 'val/reward_std_dev': 0, 'val/acc': 1 });
    expect(await step0Metrics(user, model.id)).toMatchObject({ 'val/reward': 0.5, 'val/acc': 1 });
    // Another split is its own pool.
    const train = await log(user, model.id, [{ trajectories: [traj(3)] }], 'train');
    expect(train.metrics['train/reward']).toBe(3);
  });
});
