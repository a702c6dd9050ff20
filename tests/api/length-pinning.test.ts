import { describe, expect, it } from 'vitest';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import { historySchema } from '@/lib/schemas/trajectories';
import { call, createModel, createRlJob, createUser, seedCheckpoints, type TestUser } from '../support/helpers';

/*
 * Issue 41: length pinning is judged on the server from the completions it stores (finish_reason and token counts of
 * every /log call and RL job), whatever the user named their metrics. The observed run: reward 0.32 → 1.0 by
 * filling max_tokens, with the length logged as `answer_len`, and no warning.
 */

function log(user: TestUser, modelId: string, body: unknown) {
  return call(logRoute, 'POST', `/v1/preview/models/${modelId}/log`, {
    key: user.key,
    params: { model_id: modelId },
    body,
  });
}

async function lengthPinning(user: TestUser, modelId: string) {
  const res = await call(historyRoute, 'GET', `/v1/preview/models/${modelId}/history`, {
    key: user.key,
    params: { model_id: modelId },
  });
  expect(res.status).toBe(200);
  return historySchema.parse(res.body).length_pinning;
}

/** An ART trajectory: the prompt, then a Choice with its finish_reason and (optionally) one logprob per token. */
const traj = (reward: number, finish: 'stop' | 'length', tokens: number | null) => ({
  messages_and_choices: [
    { role: 'user', content: 'Why is the sky blue?' },
    {
      index: 0,
      finish_reason: finish,
      message: { role: 'assistant', content: 'x'.repeat(tokens ?? 5) },
      logprobs:
        tokens === null ? null : { content: Array.from({ length: tokens }, () => ({ token: 'x', logprob: -1 })) },
    },
  ],
  reward,
  // Deliberately not called completion_tokens: the server must not depend on the name.
  metrics: { answer_len: tokens ?? 5 },
});

/** Step s of a run that learns to fill 64 tokens: capped share and length rise with the reward. */
const batch = (cappedOf4: number, reward: number, tokens: (capped: boolean) => number | null) => ({
  split: 'train',
  trajectory_groups: [
    {
      trajectories: Array.from({ length: 4 }, (_, i) => {
        const capped = i < cappedOf4;
        return traj(capped ? reward : reward / 2, capped ? 'length' : 'stop', tokens(capped));
      }),
    },
  ],
});

async function runOf(user: TestUser, modelId: string, capped: number[], tokens: (capped: boolean) => number | null) {
  for (let i = 0; i < capped.length; i++) {
    if (i > 0) await seedCheckpoints(modelId, [i]);
    const res = await log(user, modelId, batch(capped[i], 0.32 + (0.68 * i) / (capped.length - 1), tokens));
    expect(res.status).toBe(200);
  }
}

describe('length pinning from the stored completions', () => {
  it('flags completions that came to stop at the token limit, whatever the metric is named', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await runOf(user, model.id, [0, 0, 1, 3, 4, 4], (capped) => (capped ? 64 : 20));
    const [signal, ...rest] = await lengthPinning(user, model.id);
    expect(rest).toEqual([]);
    expect(signal).toMatchObject({ split: 'train', steps: [0, 5], length_share_from: 0, length_share_to: 1 });
    expect(signal.token_max).toBe(64);
    expect(signal.tokens_from).toBe(20);
    expect(signal.tokens_to).toBe(64);
  });

  it('reads finish_reason alone when the choices carry no logprobs', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await runOf(user, model.id, [0, 1, 4], () => null);
    expect(await lengthPinning(user, model.id)).toMatchObject([
      { split: 'train', length_share_from: 0, length_share_to: 1, tokens_from: null, token_max: null },
    ]);
  });

  it('stays quiet for a run that hit the limit from the start, or never', async () => {
    const user = await createUser();
    const always = await createModel(user);
    await runOf(user, always.id, [4, 4, 4, 4], (capped) => (capped ? 64 : 20));
    expect(await lengthPinning(user, always.id)).toEqual([]);
    const never = await createModel(user);
    await runOf(user, never.id, [0, 0, 0, 0], () => 20);
    expect(await lengthPinning(user, never.id)).toEqual([]);
  });

  it("counts an RL job's trajectories with the /log calls of its step", async () => {
    const user = await createUser();
    const model = await createModel(user);
    // Steps 0 and 1 from /log, step 2 from the RL job's own groups (split "train").
    await runOf(user, model.id, [0, 0], (capped) => (capped ? 64 : 20));
    await seedCheckpoints(model.id, [2]);
    await createRlJob(user, model.id, { trajectory_groups: batch(4, 1, () => 64).trajectory_groups });
    expect(await lengthPinning(user, model.id)).toMatchObject([{ split: 'train', steps: [0, 2], length_share_to: 1 }]);
  });
});
