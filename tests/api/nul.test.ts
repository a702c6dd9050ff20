import { describe, expect, it } from 'vitest';
import * as modelsRoute from '@/app/v1/preview/models/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as trajectoriesRoute from '@/app/v1/preview/models/[model_id]/trajectories/route';
import { call, createModel, createUser, TEST_BASE_MODEL } from '../support/helpers';

/** PostgreSQL text cannot hold U+0000; a model can still emit byte 0, and clients can still send it. */
describe('NUL characters', () => {
  it('stores model output containing NUL verbatim in logged trajectories', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const content = 'before\u0000after';
    const groups = [{ trajectories: [{ messages_and_choices: [{ role: 'assistant', content }], reward: 1 }] }];
    const res = await call(logRoute, 'POST', '/x', {
      key: user.key,
      params: { model_id: model.id },
      body: { split: 'val', trajectory_groups: groups },
    });
    expect(res.status).toBe(200);
    const stored = await call(trajectoriesRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(stored.body.data[0].group.trajectories[0].messages_and_choices[0].content).toBe(content);
  });

  it('refuses NUL elsewhere with a 422 instead of a database error', async () => {
    const user = await createUser();
    const query = await call(modelsRoute, 'GET', '/v1/preview/models', {
      key: user.key,
      query: { search: 'a\u0000b' },
    });
    expect(query.status).toBe(422);
    expect(query.body.detail[0]).toMatchObject({ loc: ['query', 'search'], type: 'string_type' });
    const body = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { project: 'p', name: 'm', base_model: `${TEST_BASE_MODEL}\u0000` },
    });
    expect(body.status).toBe(422);
    expect(body.body.detail[0].loc).toEqual(['body', 'base_model']);
  });
});
