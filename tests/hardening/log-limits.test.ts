import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as trainingJobsRoute from '@/app/v1/preview/training-jobs/route';
import { MAX_METRIC_NAMES } from '@/lib/schemas/trajectory-input';
import { call, createModel, createUser, type TestUser } from '../support/helpers';

/**
 * What a /log (and an RL job's groups) may carry, and what it can never turn into: a 500 from the database (too many
 * metric names, a NUL in one), or a step mean silently corrupted by a sum that overflowed (docs/contract.md §2.5).
 */
const traj = (reward: number, metrics: Record<string, number> = {}) => ({
  messages_and_choices: [{ role: 'assistant', content: 'a' }],
  reward,
  metrics,
});

async function log(user: TestUser, modelId: string, trajectory_groups: unknown[], split = 'val') {
  return call(logRoute, 'POST', '/x', {
    key: user.key,
    params: { model_id: modelId },
    body: { split, trajectory_groups },
  });
}

const manyMetrics = (n: number, prefix = 'm') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

async function step0Metrics(user: TestUser, modelId: string) {
  const res = await call(checkpointsRoute, 'GET', '/x', { key: user.key, params: { model_id: modelId } });
  return res.body.data[0].metrics as Record<string, number>;
}

describe('/log metric names', () => {
  it(`stores ${MAX_METRIC_NAMES} names (built-ins included) and refuses more with a 422 naming the limit`, async () => {
    const user = await createUser();
    const model = await createModel(user);
    const most = await log(user, model.id, [{ trajectories: [traj(1, manyMetrics(MAX_METRIC_NAMES - 3))] }]);
    expect(most.status).toBe(200);
    expect(Object.keys(most.body.metrics)).toHaveLength(MAX_METRIC_NAMES);
    expect((await step0Metrics(user, model.id))[`val/m${MAX_METRIC_NAMES - 4}`]).toBe(MAX_METRIC_NAMES - 4);

    for (const n of [1500, 2000]) {
      const other = await createModel(user);
      const res = await log(user, other.id, [{ trajectories: [traj(1, manyMetrics(n))] }]);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'trajectory_groups']);
      expect(res.body.detail[0].msg).toContain(`${n + 3} distinct metrics`);
      expect(res.body.detail[0].msg).toContain(`at most ${MAX_METRIC_NAMES}`);
    }
  });

  it("refuses a log that would grow the step's pool past the limit, and keeps what was stored", async () => {
    const user = await createUser();
    const model = await createModel(user);
    expect((await log(user, model.id, [{ trajectories: [traj(1, manyMetrics(600, 'a'))] }])).status).toBe(200);
    const res = await log(user, model.id, [{ trajectories: [traj(0, manyMetrics(600, 'b'))] }]);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain('would number 1203 distinct names');
    const metrics = await step0Metrics(user, model.id);
    expect(metrics['val/reward']).toBe(1);
    expect(metrics['val/b0']).toBeUndefined();
  });

  it('refuses a metric name with U+0000 or over 200 characters, naming it', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const nul = await log(user, model.id, [{ trajectories: [traj(1, { ok: 1 }), traj(1, { 'a\u0000b': 1 })] }]);
    expect(nul.status).toBe(422);
    expect(nul.body.detail[0].loc).toEqual(['body', 'trajectory_groups', 0, 'trajectories', 1, 'metrics', 'a\u0000b']);
    expect(nul.body.detail[0].msg).toContain('U+0000');
    const group = await log(user, model.id, [{ trajectories: [traj(1)], metrics: { ['x'.repeat(201)]: 1 } }]);
    expect(group.status).toBe(422);
    expect(group.body.detail[0].msg).toContain('at most 200 characters');
  });
});

describe('/log sums', () => {
  it('refuses rewards whose sum overflows, and the next logs read their own mean', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, [{ trajectories: [traj(1.7e308), traj(1.7e308)] }]);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain("'reward'");
    expect(res.body.detail[0].msg).toContain('64-bit float');
    // Observed before: 0.17 was read as 0.0567 and 0.29 as 0.115, diluted by the overflowed log's count.
    expect((await log(user, model.id, [{ trajectories: [traj(0.17)] }])).body.metrics['val/reward']).toBe(0.17);
    expect((await log(user, model.id, [{ trajectories: [traj(0.29)] }])).body.metrics['val/reward']).toBeCloseTo(0.23);
  });

  it("refuses a log whose values overflow the step's pooled sum, and keeps the pool", async () => {
    const user = await createUser();
    const model = await createModel(user);
    expect((await log(user, model.id, [{ trajectories: [traj(1, { big: 1.7e308 })] }])).status).toBe(200);
    const res = await log(user, model.id, [{ trajectories: [traj(1, { big: 1.7e308 })] }]);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain("'big'");
    expect((await step0Metrics(user, model.id))['val/big']).toBe(1.7e308);
  });
});

describe('a trajectory without a reward', () => {
  it('is a 422 naming the trajectory, on /log and on an RL job, never a reward of 0', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const unscored = { messages_and_choices: [{ role: 'assistant', content: 'a' }] };
    const res = await log(user, model.id, [{ trajectories: [traj(1), unscored] }]);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ['body', 'trajectory_groups', 0, 'trajectories', 1, 'reward'], msg: 'Field required', type: 'missing' },
    ]);
    const job = await call(trainingJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: { model_id: model.id, trajectory_groups: [{ trajectories: [unscored, traj(1)] }] },
    });
    expect(job.status).toBe(422);
    expect(job.body.detail[0].loc).toEqual(['body', 'trajectory_groups', 0, 'trajectories', 0, 'reward']);
  });

  it('an RL job with learning_rate 1e308 is a 422, as for SFT', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const job = await call(trainingJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: { model_id: model.id, trajectory_groups: [], experimental_config: { learning_rate: 1e308 } },
    });
    expect(job.status).toBe(422);
    expect(job.body.detail[0]).toMatchObject({
      loc: ['body', 'experimental_config', 'learning_rate'],
      msg: 'Value error, learning_rate must be greater than 0 and at most 1',
    });
  });
});
