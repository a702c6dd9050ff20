import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as trajectoriesRoute from '@/app/v1/preview/models/[model_id]/trajectories/route';
import { checkpointListSchema } from '@/lib/schemas/checkpoints';
import { historySchema, logResponseSchema, trajectoryGroupListSchema } from '@/lib/schemas/trajectories';
import { call, createModel, createUser, seedCheckpoints, type TestUser } from '../support/helpers';

function log(user: TestUser, modelId: string, body: unknown) {
  return call(logRoute, 'POST', `/v1/preview/models/${modelId}/log`, {
    key: user.key,
    params: { model_id: modelId },
    body,
  });
}

async function checkpoints(user: TestUser, modelId: string) {
  const res = await call(checkpointsRoute, 'GET', `/v1/preview/models/${modelId}/checkpoints`, {
    key: user.key,
    params: { model_id: modelId },
    query: { limit: 100 },
  });
  expect(res.status).toBe(200);
  return checkpointListSchema.parse(res.body).data;
}

function history(user: TestUser, modelId: string, query: Record<string, string | number | undefined> = {}) {
  return call(historyRoute, 'GET', `/v1/preview/models/${modelId}/history`, {
    key: user.key,
    params: { model_id: modelId },
    query,
  });
}

function trajectories(user: TestUser, modelId: string, query: Record<string, string | number | undefined> = {}) {
  return call(trajectoriesRoute, 'GET', `/v1/preview/models/${modelId}/trajectories`, {
    key: user.key,
    params: { model_id: modelId },
    query,
  });
}

const msg = (content: string) => ({ role: 'user', content });
const traj = (reward: number, metrics: Record<string, unknown> = {}) => ({
  messages_and_choices: [msg('hi'), { role: 'assistant', content: 'hello' }],
  reward,
  metrics,
});
const exception = { type: "<class 'TimeoutError'>", message: 'slow', traceback: '...' };

/**
 * A batch whose metrics are worked out by hand below (docs/contract.md §2.5):
 *   T = [1, 0, 0.5 | 2, 4 | 1.5 | —]                     → reward = 9 / 6 = 1.5
 *   groups with ≥ 2 trajectories: A std = sqrt(1/6), B std = 1 → reward_std_dev = (sqrt(1/6) + 1) / 2
 *   E = 1 + 0 + 0 + 2 = 3                                   → exception_rate = 3 / (6 + 3) = 1/3
 *   acc: true, false, true → 2/3;  len: 10, 20, 30 ('abc' skipped) → 20;  note: only strings → absent
 *   custom `reward: 99` loses to the built-in reward
 *   group_diversity: B 0.5, C 1.5 (D has no trajectories) → 1;  group_flag: B true → 1
 */
const HAND_BATCH = [
  {
    trajectories: [
      traj(1, { acc: true, len: 10, note: 'x' }),
      traj(0, { acc: false, len: 20 }),
      traj(0.5, { acc: true }),
    ],
    exceptions: [exception],
  },
  {
    trajectories: [traj(2, { len: 30, reward: 99, nested: { a: 1 } }), traj(4, { maybe: null })],
    exceptions: [],
    metrics: { diversity: 0.5, flag: true, label: 'green' },
    metadata: { seed: 7 },
    logs: ['group B'],
  },
  { trajectories: [traj(1.5, { len: 'abc' })], metrics: { diversity: 1.5 } },
  { trajectories: [], exceptions: [exception, exception], metrics: { diversity: 100 } },
];

const HAND_METRICS = {
  reward: 1.5,
  reward_std_dev: (Math.sqrt(1 / 6) + 1) / 2,
  exception_rate: 1 / 3,
  acc: 2 / 3,
  len: 20,
  group_diversity: 1,
  group_flag: 1,
};

function expectMetrics(actual: Record<string, number>, expected: Record<string, number>) {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [k, v] of Object.entries(expected)) expect(actual[k], k).toBeCloseTo(v, 12);
}

const prefixed = (split: string, metrics: Record<string, number>) =>
  Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`${split}/${k}`, v]));

describe('POST /v1/preview/models/{id}/log: metric formulas', () => {
  it('computes reward, reward_std_dev, exception_rate, custom and group metrics as worked out by hand', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, { split: 'val', trajectory_groups: HAND_BATCH });
    expect(res.status).toBe(200);
    const body = logResponseSchema.parse(res.body);
    expect(body.success).toBe(true);
    expect(body.step).toBe(0);
    expectMetrics(body.metrics, prefixed('val', HAND_METRICS));

    // The same keys are merged onto the latest checkpoint.
    const [step0] = await checkpoints(user, model.id);
    expectMetrics(step0.metrics, prefixed('val', HAND_METRICS));
  });

  it('gives reward_std_dev 0 when no group has two rewards', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [traj(3)] }, { trajectories: [traj(3)] }],
    });
    expectMetrics(logResponseSchema.parse(res.body).metrics, {
      'val/reward': 3,
      'val/reward_std_dev': 0,
      'val/exception_rate': 0,
    });
  });

  it('uses the exceptions-inclusive exception_rate and stores no reward without trajectories', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [], exceptions: [exception, exception], metrics: { x: 1 } }],
    });
    expect(res.status).toBe(200);
    expectMetrics(logResponseSchema.parse(res.body).metrics, { 'val/exception_rate': 1 });

    const mixed = await log(user, model.id, {
      split: 'mix',
      trajectory_groups: [
        { trajectories: [traj(1), traj(1), traj(1)], exceptions: [exception] },
        { trajectories: [], exceptions: [] },
      ],
    });
    expectMetrics(logResponseSchema.parse(mixed.body).metrics, {
      'mix/reward': 1,
      'mix/reward_std_dev': 0,
      'mix/exception_rate': 0.25,
    });
  });

  // A sum that overflows is a 422 (tests/hardening/log-limits.test.ts), never a metric silently dropped.
  it('lets built-in names win over custom ones', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [
        {
          trajectories: [traj(1, { exception_rate: 0.9, reward_std_dev: 5, ok: 1 }), traj(3, { ok: 3 })],
        },
      ],
    });
    expectMetrics(logResponseSchema.parse(res.body).metrics, {
      'val/reward': 2,
      'val/reward_std_dev': 1,
      'val/exception_rate': 0,
      'val/ok': 2,
    });
  });

  it("gives the history a reward band: p10 to p90 of every trajectory's reward per step and split", async () => {
    const user = await createUser();
    const model = await createModel(user);
    // Step 0: rewards 0..10 in two groups (pooled over two logs); p10 = 1, p90 = 9 (linear interpolation).
    const group = (rewards: number[]) => ({ trajectories: rewards.map((r) => traj(r)) });
    expect((await log(user, model.id, { split: 'train', trajectory_groups: [group([0, 1, 2, 3])] })).status).toBe(200);
    const second = { split: 'train', trajectory_groups: [group([4, 5, 6, 7, 8, 9, 10])] };
    expect((await log(user, model.id, second)).status).toBe(200);
    await seedCheckpoints(model.id, [1]);
    expect((await log(user, model.id, { split: 'train', trajectory_groups: [group([2, 2])] })).status).toBe(200);
    expect((await log(user, model.id, { split: 'val', trajectory_groups: [group([1, 3])] })).status).toBe(200);

    const res = await history(user, model.id);
    expect(res.status).toBe(200);
    const bands = Object.fromEntries(historySchema.parse(res.body).bands.map((b) => [b.name, b.points]));
    expect(bands['train/reward']).toEqual([
      [0, 1, 9],
      [1, 2, 2],
    ]);
    expect(bands['val/reward'][0][0]).toBe(1);
    expect(bands['val/reward'][0][1]).toBeCloseTo(1.2);
    expect(bands['val/reward'][0][2]).toBeCloseTo(2.8);
    // Only for the reward series asked for, and within a zoomed range.
    const some = historySchema.parse((await history(user, model.id, { keys: 'train/reward', from_step: 1 })).body);
    expect(some.bands).toEqual([{ name: 'train/reward', points: [[1, 2, 2]] }]);
    expect(historySchema.parse((await history(user, model.id, { keys: 'train/reward_std_dev' })).body).bands).toEqual(
      [],
    );
  });

  it('accepts a free-text split and prefixes every key with it', async () => {
    const user = await createUser();
    const model = await createModel(user);
    for (const split of ['train', 'eval hard', 'val/holdout']) {
      const res = await log(user, model.id, { split, trajectory_groups: [{ trajectories: [traj(1)] }] });
      expect(res.status, split).toBe(200);
      expect(Object.keys(logResponseSchema.parse(res.body).metrics).every((k) => k.startsWith(`${split}/`))).toBe(true);
    }
  });
});

describe('POST /v1/preview/models/{id}/log: storage', () => {
  it('merges into the latest checkpoint, later logs to a step pool with earlier ones, and other splits add keys', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(1), traj(0)] }] });
    await log(user, model.id, { split: 'train', trajectory_groups: [{ trajectories: [traj(5)] }] });
    const second = await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(4)] }] });
    expect(logResponseSchema.parse(second.body).step).toBe(0);
    const [step0] = await checkpoints(user, model.id);
    expect(step0.metrics).toEqual({
      'val/reward': 5 / 3,
      'val/reward_std_dev': 0.5,
      'val/exception_rate': 0,
      'train/reward': 5,
      'train/reward_std_dev': 0,
      'train/exception_rate': 0,
    });

    // A newer checkpoint becomes the target; the older one keeps its values.
    await seedCheckpoints(model.id, [1, 2]);
    const onLatest = await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(7)] }] });
    expect(logResponseSchema.parse(onLatest.body).step).toBe(2);
    const cps = await checkpoints(user, model.id);
    expect(cps.map((c) => [c.step, c.metrics['val/reward']])).toEqual([
      [0, 5 / 3],
      [1, undefined],
      [2, 7],
    ]);
  });

  it('records the run history per step, visible through GET history', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(1)] }] });
    await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(2)] }] });
    await seedCheckpoints(model.id, [1]);
    await log(user, model.id, { split: 'val', trajectory_groups: [{ trajectories: [traj(6), traj(8)] }] });

    const res = await history(user, model.id);
    expect(res.status).toBe(200);
    const h = historySchema.parse(res.body);
    expect(h.run_id).toBe(model.run_id);
    expect(h.series.map((s) => s.name)).toEqual(['val/exception_rate', 'val/reward', 'val/reward_std_dev']);
    const reward = h.series.find((s) => s.name === 'val/reward')!;
    expect(reward.points).toEqual([
      [0, 1.5],
      [1, 7],
    ]);
    expect(reward.total_points).toBe(2);

    const only = historySchema.parse((await history(user, model.id, { keys: 'val/reward_std_dev, nope' })).body);
    expect(only.series).toEqual([
      {
        name: 'val/reward_std_dev',
        total_points: 2,
        points: [
          [0, 0],
          [1, 1],
        ],
      },
      { name: 'nope', total_points: 0, points: [] },
    ]);

    const bad = await history(user, model.id, { max_points: 5 });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['query', 'max_points'], type: 'greater_than_equal' });
  });

  it('stores the groups as sent, listed through GET trajectories with step and split filters', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, { split: 'val', trajectory_groups: HAND_BATCH });
    expect(res.status).toBe(200);
    await seedCheckpoints(model.id, [1]);
    await log(user, model.id, { split: 'train', trajectory_groups: [{ trajectories: [traj(2), traj(3)] }] });

    const all = await trajectories(user, model.id);
    expect(all.status).toBe(200);
    const list = trajectoryGroupListSchema.parse(all.body);
    expect(list.data).toHaveLength(5);
    expect(list.has_more).toBe(false);
    const [a, b, c, d, e] = list.data;
    expect(a).toMatchObject({
      step: 0,
      split: 'val',
      source: 'log',
      job_id: null,
      group_index: 0,
      num_trajectories: 3,
      reward_mean: 0.5,
      reward_min: 0,
      reward_max: 1,
    });
    expect(b.group).toEqual(HAND_BATCH[1]);
    expect(c).toMatchObject({
      group_index: 2,
      num_trajectories: 1,
      reward_mean: 1.5,
      reward_min: 1.5,
      reward_max: 1.5,
    });
    expect(d).toMatchObject({
      group_index: 3,
      num_trajectories: 0,
      reward_mean: null,
      reward_min: null,
      reward_max: null,
    });
    expect(e).toMatchObject({ step: 1, split: 'train', group_index: 0, reward_mean: 2.5 });

    const step1 = trajectoryGroupListSchema.parse((await trajectories(user, model.id, { step: 1 })).body);
    expect(step1.data.map((g) => g.id)).toEqual([e.id]);
    const val = trajectoryGroupListSchema.parse((await trajectories(user, model.id, { split: 'val' })).body);
    expect(val.data.map((g) => g.group_index)).toEqual([0, 1, 2, 3]);
    const none = trajectoryGroupListSchema.parse(
      (await trajectories(user, model.id, { step: 0, split: 'train' })).body,
    );
    expect(none).toEqual({ object: 'list', data: [], has_more: false, first_id: '', last_id: '' });
    const bySource = trajectoryGroupListSchema.parse((await trajectories(user, model.id, { source: 'train' })).body);
    expect(bySource.data).toEqual([]);

    // Cursor paging visits every group once.
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = trajectoryGroupListSchema.parse((await trajectories(user, model.id, { limit: 2, after })).body);
      seen.push(...page.data.map((g) => g.id));
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(seen).toEqual(list.data.map((g) => g.id));

    const unknown = await trajectories(user, model.id, { after: crypto.randomUUID() });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['query', 'after'], msg: 'Value error, Unknown cursor' });
    for (const step of ['-1', 'x']) {
      expect((await trajectories(user, model.id, { step })).status, `step=${step}`).toBe(422);
    }
    expect((await trajectories(user, model.id, { step: 3_000_000_000 })).status).not.toBe(500);
  });

  it('answers 200 and stores nothing for empty trajectory_groups', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await log(user, model.id, { split: 'val', trajectory_groups: [] });
    expect(res.status).toBe(200);
    expect(logResponseSchema.parse(res.body)).toEqual({ success: true, step: 0, metrics: {} });
    expect((await checkpoints(user, model.id))[0].metrics).toEqual({});
    expect(trajectoryGroupListSchema.parse((await trajectories(user, model.id)).body).data).toEqual([]);
    expect(historySchema.parse((await history(user, model.id)).body).series).toEqual([]);
  });

  it('ignores a redundant model_id in the body: the path wins', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const other = await createModel(user);
    const res = await log(user, model.id, {
      model_id: other.id,
      split: 'val',
      trajectory_groups: [{ trajectories: [traj(1)] }],
      unknown_key: true,
    });
    expect(res.status).toBe(200);
    expect((await checkpoints(user, model.id))[0].metrics['val/reward']).toBe(1);
    expect((await checkpoints(user, other.id))[0].metrics).toEqual({});
  });
});

describe('POST /v1/preview/models/{id}/log: errors', () => {
  const savedLimit = process.env.TUNEBOARD_MAX_BODY_MB;
  afterEach(() => {
    if (savedLimit === undefined) delete process.env.TUNEBOARD_MAX_BODY_MB;
    else process.env.TUNEBOARD_MAX_BODY_MB = savedLimit;
  });

  it('validates split, rewards and the shape of the groups', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const group = { trajectories: [traj(1)] };

    const empty = await log(user, model.id, { split: '', trajectory_groups: [group] });
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0]).toMatchObject({ loc: ['body', 'split'], type: 'value_error' });

    const missingSplit = await log(user, model.id, { trajectory_groups: [group] });
    expect(missingSplit.body.detail).toEqual([{ loc: ['body', 'split'], msg: 'Field required', type: 'missing' }]);
    const missingGroups = await log(user, model.id, { split: 'val' });
    expect(missingGroups.body.detail).toEqual([
      { loc: ['body', 'trajectory_groups'], msg: 'Field required', type: 'missing' },
    ]);

    const nullReward = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [{ messages_and_choices: [], reward: null }] }],
    });
    expect(nullReward.status).toBe(422);
    expect(nullReward.body.detail[0]).toMatchObject({
      loc: ['body', 'trajectory_groups', 0, 'trajectories', 0, 'reward'],
      type: 'float_type',
    });
    const stringReward = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [group, { trajectories: [traj(1), { messages_and_choices: [], reward: 'high' }] }],
    });
    expect(stringReward.status).toBe(422);
    expect(stringReward.body.detail[0]).toMatchObject({
      loc: ['body', 'trajectory_groups', 1, 'trajectories', 1, 'reward'],
      type: 'float_parsing',
    });

    const notArray = await log(user, model.id, { split: 'val', trajectory_groups: { trajectories: [] } });
    expect(notArray.status).toBe(422);
    expect(notArray.body.detail[0]).toMatchObject({ loc: ['body', 'trajectory_groups'], type: 'list_type' });

    const shapes: [unknown, (string | number)[]][] = [
      [['not a group'], ['body', 'trajectory_groups', 0]],
      [[{ trajectories: 'x' }], ['body', 'trajectory_groups', 0, 'trajectories']],
      [
        [{ trajectories: [{ messages_and_choices: {} }] }],
        ['body', 'trajectory_groups', 0, 'trajectories', 0, 'messages_and_choices'],
      ],
      [
        [{ trajectories: [{ messages_and_choices: ['hi'] }] }],
        ['body', 'trajectory_groups', 0, 'trajectories', 0, 'messages_and_choices', 0],
      ],
    ];
    for (const [groups, loc] of shapes) {
      const res = await log(user, model.id, { split: 'val', trajectory_groups: groups });
      expect(res.status, JSON.stringify(groups)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
    }

    // Rejected requests store nothing.
    expect((await checkpoints(user, model.id))[0].metrics).toEqual({});
    expect(trajectoryGroupListSchema.parse((await trajectories(user, model.id)).body).data).toEqual([]);
  });

  it('answers 404 for unknown or foreign models and 401 without a key', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const body = { split: 'val', trajectory_groups: [{ trajectories: [traj(1)] }] };
    for (const id of [crypto.randomUUID(), 'nope']) {
      const res = await log(owner, id, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Model not found' });
    }
    const foreign = await log(stranger, model.id, body);
    expect(foreign.status).toBe(404);
    expect((await history(stranger, model.id)).status).toBe(404);
    expect((await trajectories(stranger, model.id)).status).toBe(404);
    expect((await checkpoints(owner, model.id))[0].metrics).toEqual({});

    const anonymous = await call(logRoute, 'POST', `/v1/preview/models/${model.id}/log`, {
      params: { model_id: model.id },
      body,
    });
    expect(anonymous.status).toBe(401);
  });

  it('answers 413 for a body over the configured limit', async () => {
    const user = await createUser();
    const model = await createModel(user);
    process.env.TUNEBOARD_MAX_BODY_MB = '1';
    const big = 'x'.repeat(1024 * 1024 + 10);
    const res = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [{ ...traj(1), logs: [big] }] }],
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body too large' });

    // Just under the limit is fine.
    const fits = await log(user, model.id, {
      split: 'val',
      trajectory_groups: [{ trajectories: [{ ...traj(1), logs: ['x'.repeat(1024 * 1024 - 500)] }] }],
    });
    expect(fits.status).toBe(200);

    // A declared Content-Length over the limit is refused before reading.
    const declared = await call(logRoute, 'POST', `/v1/preview/models/${model.id}/log`, {
      key: user.key,
      params: { model_id: model.id },
      rawBody: JSON.stringify({ split: 'val', trajectory_groups: [] }),
      headers: { 'content-length': String(2 * 1024 * 1024) },
    });
    expect(declared.status).toBe(413);
  });
});
