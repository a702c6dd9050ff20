import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as modelsRoute from '@/app/v1/preview/models/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { checkpointListSchema } from '@/lib/schemas/checkpoints';
import { deleteModelResponseSchema, modelListSchema, modelSchema, modelSummarySchema } from '@/lib/schemas/models';
import { call, createModel, createUser, seedCheckpoints, TEST_BASE_MODEL, uniqueName } from '../support/helpers';

describe('POST /v1/preview/models', () => {
  it('creates a model in the personal entity when entity is null, with run_id and a step-0 checkpoint', async () => {
    const user = await createUser();
    const res = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { entity: null, project: 'agents', name: 'agent-001', base_model: TEST_BASE_MODEL, return_existing: true },
    });
    expect(res.status).toBe(200);
    const model = modelSchema.parse(res.body);
    expect(model.entity).toBe(user.handle);
    expect(model.project).toBe('agents');
    expect(model.run_id).toMatch(/^[a-z0-9]{8}$/);

    const cps = await call(checkpointsRoute, 'GET', `/v1/preview/models/${model.id}/checkpoints`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(cps.status).toBe(200);
    const list = checkpointListSchema.parse(cps.body);
    expect(list.data.map((c) => [c.step, c.metrics])).toEqual([[0, {}]]);
    expect(list.has_more).toBe(false);
  });

  it('returns the stored record unchanged with return_existing, and 409 without it', async () => {
    const user = await createUser();
    const first = await createModel(user, { name: 'dup' });
    const again = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { project: 'proj', name: 'dup', base_model: 'tuneboard/tiny-chat', return_existing: true },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
    const conflict = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { project: 'proj', name: 'dup', base_model: TEST_BASE_MODEL },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ detail: `Model '${user.handle}/proj/dup' already exists` });
  });

  it('rejects an unknown base model with a 422 that lists the available ones', async () => {
    const user = await createUser();
    const res = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { project: 'p', name: 'm', base_model: 'nope/nothing' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'base_model'], type: 'value_error' });
    expect(res.body.detail[0].msg).toContain('Unsupported base model: nope/nothing');
    expect(res.body.detail[0].msg).toContain(TEST_BASE_MODEL);
  });

  it('validates required fields and name segments', async () => {
    const user = await createUser();
    const missing = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { name: 'x', base_model: TEST_BASE_MODEL },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([{ loc: ['body', 'project'], msg: 'Field required', type: 'missing' }]);

    const slash = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { project: 'a/b', name: 'x', base_model: TEST_BASE_MODEL },
    });
    expect(slash.status).toBe(422);
    expect(slash.body.detail[0]).toMatchObject({ loc: ['body', 'project'], type: 'value_error' });

    const malformed = await call(modelsRoute, 'POST', '/v1/preview/models', { key: user.key, rawBody: '{"project":' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error' });

    const noBody = await call(modelsRoute, 'POST', '/v1/preview/models', { key: user.key });
    expect(noBody.status).toBe(422);
    expect(noBody.body.detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });

  it('answers 403 for an entity the key cannot use, and creates in a team the user belongs to', async () => {
    const user = await createUser();
    const other = await createUser();
    const res = await call(modelsRoute, 'POST', '/v1/preview/models', {
      key: user.key,
      body: { entity: other.handle, project: 'p', name: 'm', base_model: TEST_BASE_MODEL },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: `Entity '${other.handle}' is not accessible with this API key` });
  });

  it('requires a valid bearer key', async () => {
    const none = await call(modelsRoute, 'POST', '/v1/preview/models', { body: {} });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ detail: 'Not authenticated' });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await call(modelsRoute, 'POST', '/v1/preview/models', { key: 'tb_nonsense', body: {} });
    expect(wrong.status).toBe(401);
    const scheme = await call(modelsRoute, 'POST', '/v1/preview/models', {
      headers: { authorization: 'Basic abc' },
      body: {},
    });
    expect(scheme.status).toBe(401);
  });
});

describe('model list, get and delete', () => {
  it('lists models newest first with search and filters, paging by cursor', async () => {
    const user = await createUser();
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(await createModel(user, { name: `walk-${i}`, project: i % 2 ? 'odd' : 'even' }));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query: { limit: 2, after } });
      expect(page.status).toBe(200);
      const list = modelListSchema.parse(page.body);
      seen.push(...list.data.map((m) => m.id));
      if (!list.has_more) break;
      after = list.last_id;
    }
    expect(seen).toEqual(created.map((m) => m.id).reverse());

    const odd = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query: { project: 'odd' } });
    expect(odd.body.data.map((m: { name: string }) => m.name).sort()).toEqual(['walk-1', 'walk-3']);
    const search = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query: { search: 'WALK-4' } });
    expect(search.body.data.map((m: { name: string }) => m.name)).toEqual(['walk-4']);
    const badCursor = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query: { after: 'zzz' } });
    expect(badCursor.status).toBe(422);
  });

  it("reports each model's best checkpoint metric: val/reward, else val/loss, never a train metric unless asked", async () => {
    const user = await createUser();
    const ranked = await createModel(user, { name: 'ranked' });
    await seedCheckpoints(ranked.id, [1], { 'val/reward': 0.5, 'train/loss': 2 });
    await seedCheckpoints(ranked.id, [2], { 'val/reward': 0.9, 'train/loss': 1 });
    await seedCheckpoints(ranked.id, [3], { 'val/reward': 0.9, 'train/loss': 3 });
    const trainOnly = await createModel(user, { name: 'train-only' });
    await seedCheckpoints(trainOnly.id, [1], { 'train/reward': 0.25 });
    const bare = await createModel(user, { name: 'bare' });

    const best = async (query: Record<string, string> = {}) => {
      const res = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query });
      expect(res.status).toBe(200);
      const list = modelListSchema.parse(res.body);
      return Object.fromEntries(list.data.map((m) => [m.name, m.best_metric]));
    };
    // A tie goes to the later step, as the checkpoint table's badge does.
    expect(await best()).toEqual({
      ranked: { name: 'val/reward', value: 0.9, step: 3, direction: 'max' },
      'train-only': null,
      bare: null,
    });
    expect((await best({ metric: 'train/reward' }))['train-only']).toEqual({
      name: 'train/reward',
      value: 0.25,
      step: 1,
      direction: 'max',
    });
    // A loss improves downward unless told otherwise.
    expect((await best({ metric: 'train/loss' })).ranked).toEqual({
      name: 'train/loss',
      value: 1,
      step: 2,
      direction: 'min',
    });
    expect((await best({ metric: 'train/loss', metric_direction: 'max' })).ranked).toMatchObject({ value: 3, step: 3 });
    expect((await best({ metric: 'train/loss' }))['train-only']).toBeNull();

    const one = await call(modelRoute, 'GET', `/v1/preview/models/${ranked.id}`, {
      key: user.key,
      params: { model_id: ranked.id },
    });
    expect(modelSummarySchema.parse(one.body).best_metric).toMatchObject({ name: 'val/reward', step: 3 });
    expect(
      modelSummarySchema.parse(
        (
          await call(modelRoute, 'GET', `/v1/preview/models/${bare.id}`, {
            key: user.key,
            params: { model_id: bare.id },
          })
        ).body,
      ).best_metric,
    ).toBeNull();

    // Metric names reach the SQL as literals (for the best-metric indexes); a quote in one is just a character.
    await seedCheckpoints(bare.id, [1], { "it's": 4, 'val/loss': 0.5 });
    expect((await best({ metric: "it's" })).bare).toEqual({ name: "it's", value: 4, step: 1, direction: 'max' });
    expect((await best({ metric: "x' or '1'='1" })).bare).toBeNull();
    // val/loss is the default when no val/reward exists, lowest first.
    expect((await best()).bare).toEqual({ name: 'val/loss', value: 0.5, step: 1, direction: 'min' });

    const bad = await call(modelsRoute, 'GET', '/v1/preview/models', {
      key: user.key,
      query: { metric_direction: 'up' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'metric_direction']);
  });

  it('keeps checkpoint_count true through every writer of checkpoints (create, a job committing one, delete)', async () => {
    const user = await createUser();
    const model = await createModel(user); // its step-0 checkpoint
    const other = await createModel(user);
    const shown = async () => {
      const list = await call(modelsRoute, 'GET', '/v1/preview/models', { key: user.key, query: { limit: 100 } });
      const one = await call(modelRoute, 'GET', `/v1/preview/models/${model.id}`, {
        key: user.key,
        params: { model_id: model.id },
      });
      const fromList = modelListSchema.parse(list.body).data.find((m) => m.id === model.id)!.checkpoint_count;
      expect(modelSummarySchema.parse(one.body).checkpoint_count).toBe(fromList);
      return fromList;
    };
    const db = await getDb();
    const counted = async () =>
      Number(
        (
          (await db.execute(sql`select count(*) as n from checkpoints where model_id = ${model.id}`)) as unknown as {
            rows: { n: unknown }[];
          }
        ).rows[0].n,
      );
    expect(await shown()).toBe(1);
    await seedCheckpoints(model.id, [1, 2, 3, 4, 5]);
    await seedCheckpoints(other.id, [1, 2]);
    expect(await shown()).toBe(6);
    const del = await call(checkpointsRoute, 'DELETE', `/v1/preview/models/${model.id}/checkpoints`, {
      key: user.key,
      params: { model_id: model.id },
      body: { steps: [0, 2, 99] },
    });
    expect(del.body).toMatchObject({ deleted_count: 2 });
    expect(await shown()).toBe(4);
    // What a finishing job calls, inside its transaction and outside one.
    await db.transaction((tx) => insertCheckpoint(tx, { modelId: model.id, step: 7, metrics: {}, artifactKey: null }));
    await insertCheckpoint(db, { modelId: other.id, step: 7, metrics: {}, artifactKey: null });
    await call(checkpointsRoute, 'DELETE', `/v1/preview/models/${model.id}/checkpoints`, {
      key: user.key,
      params: { model_id: model.id },
      body: { steps: [1, 3] },
    });
    expect(await shown()).toBe(3);
    expect(await counted()).toBe(3);
    const otherNow = await call(modelRoute, 'GET', `/v1/preview/models/${other.id}`, {
      key: user.key,
      params: { model_id: other.id },
    });
    expect(modelSummarySchema.parse(otherNow.body).checkpoint_count).toBe(4);
  });

  it('gets one model with its latest step, and deletes it with its checkpoints and run', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const got = await call(modelRoute, 'GET', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(modelSummarySchema.parse(got.body)).toMatchObject({ id: model.id, latest_step: 0, checkpoint_count: 1 });

    const del = await call(modelRoute, 'DELETE', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(del.status).toBe(200);
    expect(deleteModelResponseSchema.parse(del.body)).toEqual({
      model_id: model.id,
      deleted_checkpoints: 1,
      deleted_run: true,
    });

    const again = await call(modelRoute, 'DELETE', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: 'Model not found' });

    // The name is free again, and the new model starts at step 0 with a new id.
    const reborn = await createModel(user, { name: model.name });
    expect(reborn.id).not.toBe(model.id);
  });

  it('treats a non-UUID path id as unknown (404)', async () => {
    const user = await createUser();
    const res = await call(modelRoute, 'DELETE', '/v1/preview/models/not-a-uuid', {
      key: user.key,
      params: { model_id: 'not-a-uuid' },
    });
    expect(res.status).toBe(404);
  });

  it("hides another user's model behind 404 everywhere", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    const params = { model_id: model.id };
    expect((await call(modelRoute, 'GET', '/x', { key: stranger.key, params })).status).toBe(404);
    expect((await call(modelRoute, 'DELETE', '/x', { key: stranger.key, params })).status).toBe(404);
    expect((await call(checkpointsRoute, 'GET', '/x', { key: stranger.key, params })).status).toBe(404);
    const list = await call(modelsRoute, 'GET', '/v1/preview/models', { key: stranger.key });
    expect(list.body.data).toEqual([]);
    const byEntity = await call(modelsRoute, 'GET', '/v1/preview/models', {
      key: stranger.key,
      query: { entity: owner.handle },
    });
    expect(byEntity.body.data).toEqual([]);
  });

  it('answers unsupported methods with a JSON 405', async () => {
    const user = await createUser();
    const res = await call(modelsRoute, 'PUT', '/v1/preview/models', { key: user.key });
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: 'Method Not Allowed' });
    expect(res.headers.get('allow')).toBe('POST, GET');
  });

  it('lists unique names across create races', async () => {
    const user = await createUser();
    const name = uniqueName('race-');
    const results = await Promise.all(
      [0, 1, 2].map(() =>
        call(modelsRoute, 'POST', '/v1/preview/models', {
          key: user.key,
          body: { project: 'p', name, base_model: TEST_BASE_MODEL, return_existing: true },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  });
});
