import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import { logResponseSchema } from '@/lib/schemas/trajectories';
import { call, createModel, createUser, type TestUser } from '../support/helpers';

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
 * Several logs to one step describe all their trajectories. (A trajectory without a reward is a 422:
 * tests/hardening/log-limits.test.ts.)
 */
describe('/log semantics', () => {
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
