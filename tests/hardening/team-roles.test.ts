import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import * as membersRoute from '@/app/v1/teams/[team]/members/route';
import * as teamsRoute from '@/app/v1/teams/route';
import { call, createModel, createRlJob, createUser, uniqueName, type TestUser } from '../support/helpers';

async function teamWith(owner: TestUser, members: { user: TestUser; role: 'admin' | 'member' }[]) {
  const name = uniqueName('team-');
  expect((await call(teamsRoute, 'POST', '/v1/teams', { key: owner.key, body: { name } })).status).toBe(201);
  for (const m of members) {
    const res = await call(membersRoute, 'POST', '/x', {
      key: owner.key,
      params: { team: name },
      body: { email: m.user.email, role: m.role },
    });
    expect(res.status).toBe(200);
  }
  return name;
}

/**
 * Who may do what in a team: every member may read, create models, log and train; deleting models and
 * checkpoints takes an owner or admin; a member may cancel only the jobs they started.
 */
describe('team roles', () => {
  it('a plain member cannot delete team models or checkpoints; an admin can', async () => {
    const [owner, member, admin] = await Promise.all([createUser(), createUser(), createUser()]);
    const team = await teamWith(owner, [
      { user: member, role: 'member' },
      { user: admin, role: 'admin' },
    ]);
    const model = await createModel(owner, { entity: team });

    const delCheckpoint = await call(checkpointsRoute, 'DELETE', '/x', {
      key: member.key,
      params: { model_id: model.id },
      body: { steps: [0] },
    });
    expect(delCheckpoint.status).toBe(403);
    const delModel = await call(modelRoute, 'DELETE', '/x', { key: member.key, params: { model_id: model.id } });
    expect(delModel.status).toBe(403);
    expect(delModel.body.detail).toMatch(/owner|admin/);
    // Nothing was deleted.
    expect(
      (await call(modelRoute, 'GET', '/x', { key: owner.key, params: { model_id: model.id } })).body.checkpoint_count,
    ).toBe(1);

    // A member's own model in the team is the team's: the same rule applies.
    const own = await createModel(member, { entity: team });
    expect((await call(modelRoute, 'DELETE', '/x', { key: member.key, params: { model_id: own.id } })).status).toBe(
      403,
    );

    expect(
      (
        await call(checkpointsRoute, 'DELETE', '/x', {
          key: admin.key,
          params: { model_id: model.id },
          body: { steps: [0] },
        })
      ).status,
    ).toBe(200);
    expect((await call(modelRoute, 'DELETE', '/x', { key: admin.key, params: { model_id: model.id } })).status).toBe(
      200,
    );
  }, 60_000);

  it("a plain member may cancel the jobs they started, not other members' jobs", async () => {
    const [owner, member] = await Promise.all([createUser(), createUser()]);
    const team = await teamWith(owner, [{ user: member, role: 'member' }]);
    const model = await createModel(owner, { entity: team });
    const ownersJob = await createRlJob(owner, model.id);
    const membersJob = await createRlJob(member, model.id);
    const denied = await call(cancelRoute, 'POST', '/x', { key: member.key, params: { training_job_id: ownersJob } });
    expect(denied.status).toBe(403);
    const allowed = await call(cancelRoute, 'POST', '/x', { key: member.key, params: { training_job_id: membersJob } });
    expect(allowed.status).toBe(200);
    expect(
      (await call(cancelRoute, 'POST', '/x', { key: owner.key, params: { training_job_id: ownersJob } })).status,
    ).toBe(200);
  }, 60_000);

  it('in a personal entity the owner keeps every right', async () => {
    const user = await createUser();
    const model = await createModel(user);
    expect((await call(modelRoute, 'DELETE', '/x', { key: user.key, params: { model_id: model.id } })).status).toBe(
      200,
    );
  });
});
