import { describe, expect, it } from 'vitest';
import * as abVotesRoute from '@/app/v1/preview/models/[model_id]/ab-votes/route';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { abVoteSummarySchema } from '@/lib/schemas/ab-votes';
import { call, createModel, createUser, type TestUser } from '../support/helpers';

const vote = (user: TestUser, modelId: string, body: unknown) =>
  call(abVotesRoute, 'POST', `/v1/preview/models/${modelId}/ab-votes`, {
    key: user.key,
    params: { model_id: modelId },
    body,
  });

describe('blind A/B votes', () => {
  it('tallies per pair of steps by the step that won, whichever side it was shown on', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const db = await getDb();
    for (const step of [1, 2]) await insertCheckpoint(db, { modelId: model.id, step, metrics: {}, artifactKey: null });
    const cast = async (a: number, b: number, winner: string) => {
      const res = await vote(user, model.id, { a_step: a, b_step: b, winner, prompt: 'Capital of France?' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    // Step 2 wins three times from either side, step 0 once; a tie and a both-bad.
    await cast(2, 0, 'a');
    await cast(0, 2, 'b');
    await cast(0, 2, 'b');
    await cast(0, 2, 'a');
    await cast(2, 0, 'tie');
    await cast(0, 2, 'both_bad');
    await cast(1, 2, 'a');
    const res = await call(abVotesRoute, 'GET', `/v1/preview/models/${model.id}/ab-votes`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(res.status).toBe(200);
    expect(abVoteSummarySchema.parse(res.body).data).toEqual([
      { low_step: 0, high_step: 2, votes: 6, low_wins: 1, high_wins: 3, ties: 1, both_bad: 1 },
      { low_step: 1, high_step: 2, votes: 1, low_wins: 1, high_wins: 0, ties: 0, both_bad: 0 },
    ]);
  });

  it('refuses a vote on one step, a missing step, a bad winner or an empty prompt; another user gets 404', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const same = await vote(user, model.id, { a_step: 0, b_step: 0, winner: 'a', prompt: 'x' });
    expect(same.status).toBe(422);
    expect(same.body.detail[0]).toMatchObject({ loc: ['body', 'b_step'] });
    const missing = await vote(user, model.id, { a_step: 0, b_step: 7, winner: 'a', prompt: 'x' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].msg).toBe('Value error, The model has no checkpoint at step 7');
    expect((await vote(user, model.id, { a_step: 0, b_step: 1, winner: 'left', prompt: 'x' })).status).toBe(422);
    expect((await vote(user, model.id, { a_step: 0, b_step: 1, winner: 'a', prompt: '' })).status).toBe(422);
    const stranger = await createUser();
    expect((await vote(stranger, model.id, { a_step: 0, b_step: 1, winner: 'a', prompt: 'x' })).status).toBe(404);
  });
});
