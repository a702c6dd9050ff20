import { describe, expect, it } from 'vitest';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as trajectoriesRoute from '@/app/v1/preview/models/[model_id]/trajectories/route';
import { bodyThreadCount, bodyThreadRunning, crashBodyThread, openBodySink } from '@/lib/api/body-offload';
import { computeTrajectoryMetrics, prefixKeys } from '@/lib/services/trajectory-metrics';
import type { TrajectoryGroup } from '@/lib/schemas/trajectory-input';
import { call, createModel, createRlJob, createUser, type TestUser } from '../support/helpers';

// A /log body past 1 MiB is parsed, validated and stringified on the body thread (lib/body), so that a large
// log does not stall the request thread. Whichever thread parses it, the client must see the same answers.

function postLog(user: TestUser, modelId: string, rawBody: string) {
  return call(logRoute, 'POST', `/v1/preview/models/${modelId}/log`, {
    key: user.key,
    params: { model_id: modelId },
    rawBody,
    headers: { 'content-type': 'application/json' },
  });
}

/** Groups of about `mib` MiB: long assistant turns (with a NUL a model may emit), rewards and custom metrics. */
function groups(mib: number): TrajectoryGroup[] {
  const text = 'word '.repeat(Math.ceil((mib * 2 ** 20) / 5 / 8)) + '\u0000end';
  return Array.from({ length: 2 }, (_, g) => ({
    trajectories: Array.from({ length: 4 }, (_, i) => ({
      messages_and_choices: [
        { role: 'user', content: `question ${g}` },
        { role: 'assistant', content: text },
      ],
      reward: i * 0.25 + g,
      metrics: { length: i + 1, correct: i % 2 === 0 },
    })),
    metrics: { diversity: g + 0.5 },
    exceptions: g === 1 ? [{ type: 'TimeoutError', message: 'slow' }] : [],
  }));
}

describe('large /log bodies on the body thread', () => {
  it('stores the groups verbatim and answers the same metrics as a small body would', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const sent = groups(3);
    const before = bodyThreadCount();
    const res = await postLog(user, model.id, JSON.stringify({ split: 'val', trajectory_groups: sent }));
    expect(res.status).toBe(200);
    expect(bodyThreadCount()).toBe(before + 1);
    expect(res.body.metrics).toEqual(prefixKeys(computeTrajectoryMetrics(sent), 'val'));

    const listed = await call(trajectoriesRoute, 'GET', `/v1/preview/models/${model.id}/trajectories`, {
      key: user.key,
      params: { model_id: model.id },
      query: { limit: 10 },
    });
    expect(listed.status).toBe(200);
    const stored = [...listed.body.data].sort((a, b) => a.group_index - b.group_index);
    expect(stored.map((r: { group: unknown }) => r.group)).toEqual(sent);
    expect(stored.map((r: { reward_max: number }) => r.reward_max)).toEqual([0.75, 1.75]);

    // A small body takes the inline path.
    const small = await postLog(user, model.id, JSON.stringify({ split: 'val', trajectory_groups: groups(0.01) }));
    expect(small.status).toBe(200);
    expect(bodyThreadCount()).toBe(before + 1);
  });

  it('refuses bad large bodies exactly as it refuses bad small ones', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const padding = 'x'.repeat(2 * 2 ** 20);
    const pad = (extra: object) => JSON.stringify({ ...extra, padding });
    const cases: Array<[string, (big: boolean) => string]> = [
      ['a malformed document', (big) => `{"split": "val", "padding": "${big ? padding : ''}", "trajectory_groups": [}`],
      [
        'a NUL outside the trajectories',
        (big) => (big ? pad : JSON.stringify)({ split: 'v\u0000al', trajectory_groups: [] }),
      ],
      [
        'a reward that is not a number',
        (big) =>
          (big ? pad : JSON.stringify)({
            split: 'val',
            trajectory_groups: [{ trajectories: [{ messages_and_choices: [], reward: 'high' }] }],
          }),
      ],
      ['no split', (big) => (big ? pad : JSON.stringify)({ trajectory_groups: [] })],
    ];
    const before = bodyThreadCount();
    for (const [what, body] of cases) {
      const small = await postLog(user, model.id, body(false));
      const large = await postLog(user, model.id, body(true));
      expect(small.status, what).toBe(422);
      expect(large.status, what).toBe(422);
      const withoutPosition = (detail: Array<{ loc: unknown[] }>) =>
        detail.map((d) => ({ ...d, loc: d.loc.filter((part) => typeof part === 'string') }));
      // The decode position differs (the large body is longer); everything else is the same answer.
      expect(withoutPosition(large.body.detail), what).toEqual(withoutPosition(small.body.detail));
    }
    expect(bodyThreadCount()).toBe(before + cases.length);
  });

  it('ends the body thread 2 s after its last body, so an idle server does not keep what it parsed, and starts another for the next', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const body = JSON.stringify({ split: 'val', trajectory_groups: groups(2) });
    expect((await postLog(user, model.id, body)).status).toBe(200);
    expect(bodyThreadRunning()).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    // Still there a second later: a client logging every step does not start a thread for each.
    expect(bodyThreadRunning()).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    expect(bodyThreadRunning()).toBe(false);
    const before = bodyThreadCount();
    const again = await postLog(user, model.id, body);
    expect(again.status).toBe(200);
    expect(again.body.success).toBe(true);
    expect(bodyThreadCount()).toBe(before + 1);
    expect(bodyThreadRunning()).toBe(true);
  });

  it('a body still arriving when the body thread dies is refused at its end instead of waiting forever, and the next body gets a new thread', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ split: 'val', trajectory_groups: groups(2) }));
    const cut = bytes.length >> 1;
    const sink = openBodySink('log', 'preview');
    sink.write(bytes.subarray(0, cut));
    await crashBodyThread();
    sink.write(bytes.subarray(cut));
    const outcome = await Promise.race([
      sink.end().then(
        () => 'answered',
        (err: Error) => err.message,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 2000)),
    ]);
    expect(outcome).toMatch(/body thread exited/);

    const next = openBodySink('log', 'preview');
    next.write(bytes);
    const prepared = await next.end();
    expect(prepared.split).toBe('val');
    expect(prepared.groups).toHaveLength(2);
  });

  it('an RL job with a large body stores its groups as sent, for the trainer to read back', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const sent = groups(2);
    const before = bodyThreadCount();
    const jobId = await createRlJob(user, model.id, { trajectory_groups: sent, experimental_config: { seed: 3 } });
    expect(bodyThreadCount()).toBe(before + 1);
    const listed = await call(trajectoriesRoute, 'GET', `/v1/preview/models/${model.id}/trajectories`, {
      key: user.key,
      params: { model_id: model.id },
      query: { limit: 10, source: 'train' },
    });
    const stored = [...listed.body.data].sort((a, b) => a.group_index - b.group_index);
    expect(stored.map((r: { job_id: string }) => r.job_id)).toEqual([jobId, jobId]);
    expect(stored.map((r: { group: unknown }) => r.group)).toEqual(sent);
  });
});
