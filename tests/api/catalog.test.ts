import { describe, expect, it } from 'vitest';
import * as baseModelsRoute from '@/app/v1/preview/base-models/route';
import * as projectsRoute from '@/app/v1/preview/projects/route';
import * as teamsRoute from '@/app/v1/teams/route';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { projectListSchema } from '@/lib/schemas/models';
import { call, createModel, createUser, TEST_BASE_MODEL, uniqueName } from '../support/helpers';

describe('GET /v1/preview/base-models', () => {
  it('lists the base models models can be created from, including the test model', async () => {
    const user = await createUser();
    const res = await call(baseModelsRoute, 'GET', '/v1/preview/base-models', { key: user.key });
    expect(res.status).toBe(200);
    const list = baseModelListSchema.parse(res.body);
    expect(list.object).toBe('list');
    expect(list.data.map((m) => m.id)).toContain(TEST_BASE_MODEL);
    expect(list.data.find((m) => m.id === TEST_BASE_MODEL)!.backend).toBe('builtin');
    expect((await call(baseModelsRoute, 'GET', '/v1/preview/base-models')).status).toBe(401);
  });
});

describe('GET /v1/preview/projects', () => {
  it("lists the projects of the caller's entities with model counts, filtered by entity", async () => {
    const user = await createUser();
    const stranger = await createUser();
    await createModel(user, { project: 'alpha' });
    await createModel(user, { project: 'alpha' });
    await createModel(user, { project: 'beta' });
    await createModel(stranger, { project: 'alpha' });
    const team = uniqueName('team-');
    expect((await call(teamsRoute, 'POST', '/v1/teams', { key: user.key, body: { name: team } })).status).toBe(201);
    await createModel(user, { entity: team, project: 'shared' });

    const res = await call(projectsRoute, 'GET', '/v1/preview/projects', { key: user.key });
    expect(res.status).toBe(200);
    const list = projectListSchema.parse(res.body);
    const rows = list.data.map((p) => [p.entity, p.name, p.model_count]);
    expect(rows).toHaveLength(3);
    expect(rows).toEqual(
      expect.arrayContaining([
        [user.handle, 'alpha', 2],
        [user.handle, 'beta', 1],
        [team, 'shared', 1],
      ]),
    );

    const onlyTeam = projectListSchema.parse(
      (await call(projectsRoute, 'GET', '/x', { key: user.key, query: { entity: team } })).body,
    );
    expect(onlyTeam.data.map((p) => p.name)).toEqual(['shared']);
    const foreign = projectListSchema.parse(
      (await call(projectsRoute, 'GET', '/x', { key: user.key, query: { entity: stranger.handle } })).body,
    );
    expect(foreign.data).toEqual([]);
  });
});
