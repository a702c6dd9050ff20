import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as checkpointsRoute from '@/app/v1/preview/models/[model_id]/checkpoints/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import { checkpointListSchema, deleteCheckpointsResponseSchema, type CheckpointDto } from '@/lib/schemas/checkpoints';
import { modelSummarySchema } from '@/lib/schemas/models';
import { call, createModel, createUser, seedCheckpoints, type TestUser } from '../support/helpers';

const path = (id: string) => `/v1/preview/models/${id}/checkpoints`;

function list(user: TestUser, modelId: string, query: Record<string, string | number | undefined> = {}) {
  return call(checkpointsRoute, 'GET', path(modelId), { key: user.key, params: { model_id: modelId }, query });
}

function del(user: TestUser, modelId: string, body: unknown) {
  return call(checkpointsRoute, 'DELETE', path(modelId), { key: user.key, params: { model_id: modelId }, body });
}

/** Walks every page the way ART does: keep asking while has_more !== false and data is non-empty, after = last item. */
async function walk(user: TestUser, modelId: string, order: 'asc' | 'desc', limit: number) {
  const seen: CheckpointDto[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const res = await list(user, modelId, { order, limit, after });
    expect(res.status).toBe(200);
    const page = checkpointListSchema.parse(res.body);
    pages++;
    expect(page.data.length).toBeLessThanOrEqual(limit);
    if (page.data.length > 0) {
      expect(page.first_id).toBe(page.data[0].id);
      expect(page.last_id).toBe(page.data.at(-1)!.id);
    }
    seen.push(...page.data);
    if (page.has_more === false || page.data.length === 0) break;
    after = page.data.at(-1)!.id;
    if (pages > 100) throw new Error('paging does not terminate');
  }
  return { seen, pages };
}

describe('GET /v1/preview/models/{id}/checkpoints', () => {
  it('lists the step-0 checkpoint of a new model in the list envelope', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await list(user, model.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const page = checkpointListSchema.parse(res.body);
    expect(page.object).toBe('list');
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ step: 0, metrics: {} });
    expect(page.first_id).toBe(page.data[0].id);
    expect(page.last_id).toBe(page.data[0].id);
    expect(page.has_more).toBe(false);
  });

  it('pages 20 per page by default, ascending by step', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await seedCheckpoints(
      model.id,
      Array.from({ length: 24 }, (_, i) => i + 1),
    );
    const first = checkpointListSchema.parse((await list(user, model.id)).body);
    expect(first.data.map((c) => c.step)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(first.has_more).toBe(true);
    const second = checkpointListSchema.parse((await list(user, model.id, { after: first.last_id })).body);
    expect(second.data.map((c) => c.step)).toEqual([20, 21, 22, 23, 24]);
    expect(second.has_more).toBe(false);

    const exact = checkpointListSchema.parse((await list(user, model.id, { limit: 25 })).body);
    expect(exact.data).toHaveLength(25);
    expect(exact.has_more).toBe(false);
  });

  it('reads the latest step with limit=1&order=desc, and follows the cursor towards lower steps in desc', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const seeded = await seedCheckpoints(model.id, [1, 2, 5, 9]);
    const latest = checkpointListSchema.parse((await list(user, model.id, { limit: 1, order: 'desc' })).body);
    expect(latest.data.map((c) => c.step)).toEqual([9]);
    expect(latest.has_more).toBe(true);

    const cursor = seeded.find((c) => c.step === 5)!.id;
    const desc = checkpointListSchema.parse((await list(user, model.id, { order: 'desc', after: cursor })).body);
    expect(desc.data.map((c) => c.step)).toEqual([2, 1, 0]);
    expect(desc.has_more).toBe(false);
    const asc = checkpointListSchema.parse((await list(user, model.id, { order: 'asc', after: cursor })).body);
    expect(asc.data.map((c) => c.step)).toEqual([9]);
    expect(asc.has_more).toBe(false);

    // The cursor at either end gives an empty page with "" ids.
    const past = await list(user, model.id, { order: 'desc', after: latest.data[0].id, limit: 100 });
    expect(checkpointListSchema.parse(past.body).data).toHaveLength(4);
    const end = checkpointListSchema.parse(
      (await list(user, model.id, { order: 'asc', after: latest.data[0].id })).body,
    );
    expect(end).toEqual({ object: 'list', data: [], has_more: false, first_id: '', last_id: '' });
  });

  it('visits every checkpoint exactly once when walking pages in both orders', async () => {
    const user = await createUser();
    const model = await createModel(user);
    // Gaps in the step numbers, as after deletions: paging goes by step, not by position.
    const steps = Array.from({ length: 36 }, (_, i) => 1 + i * 3);
    await seedCheckpoints(model.id, steps);
    const all = [0, ...steps];

    for (const limit of [1, 7, 37, 100]) {
      const asc = await walk(user, model.id, 'asc', limit);
      expect(asc.seen.map((c) => c.step)).toEqual(all);
      expect(new Set(asc.seen.map((c) => c.id)).size).toBe(all.length);
      const desc = await walk(user, model.id, 'desc', limit);
      expect(desc.seen.map((c) => c.step)).toEqual([...all].reverse());
      expect(new Set(desc.seen.map((c) => c.id)).size).toBe(all.length);
      expect(asc.pages).toBe(Math.ceil(all.length / limit));
    }
  });

  it('answers an empty envelope with "" ids when every checkpoint was deleted', async () => {
    const user = await createUser();
    const model = await createModel(user);
    expect((await del(user, model.id, { steps: [0] })).body).toEqual({ deleted_count: 1, not_found_steps: [] });
    for (const order of ['asc', 'desc']) {
      const res = await list(user, model.id, { order });
      expect(res.status).toBe(200);
      expect(checkpointListSchema.parse(res.body)).toEqual({
        object: 'list',
        data: [],
        has_more: false,
        first_id: '',
        last_id: '',
      });
    }
  });

  it('validates limit like pydantic: 1..100, integers only', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const cases: [string, string, string][] = [
      ['0', 'greater_than_equal', 'Input should be greater than or equal to 1'],
      ['-3', 'greater_than_equal', 'Input should be greater than or equal to 1'],
      ['101', 'less_than_equal', 'Input should be less than or equal to 100'],
      ['abc', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
      ['1.5', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
      ['', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ];
    for (const [limit, type, msg] of cases) {
      const res = await list(user, model.id, { limit });
      expect(res.status, `limit=${limit}`).toBe(422);
      expect(res.body.detail).toHaveLength(1);
      expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'limit'], type, msg });
    }
    for (const limit of ['1', '100', ' 5 ']) {
      expect((await list(user, model.id, { limit })).status, `limit=${limit}`).toBe(200);
    }
  });

  it("rejects an order other than 'asc' or 'desc'", async () => {
    const user = await createUser();
    const model = await createModel(user);
    for (const order of ['up', 'ASC', '']) {
      const res = await list(user, model.id, { order });
      expect(res.status, `order=${order}`).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc: ['query', 'order'],
        type: 'enum',
        msg: "Input should be 'asc' or 'desc'",
      });
    }
  });

  it('rejects a cursor that is not a current checkpoint of this model', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const other = await createModel(user);
    const [deleted] = await seedCheckpoints(model.id, [1]);
    await del(user, model.id, { steps: [1] });
    const otherStep0 = checkpointListSchema.parse((await list(user, other.id)).body).data[0].id;
    for (const after of [crypto.randomUUID(), 'zzz', deleted.id, otherStep0, model.id]) {
      const res = await list(user, model.id, { after });
      expect(res.status, `after=${after}`).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ['query', 'after'], msg: 'Value error, Unknown cursor', type: 'value_error', input: after },
      ]);
    }
  });

  it('answers 404 for unknown, malformed and foreign model ids, and 401 without a key', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const model = await createModel(owner);
    for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
      const res = await list(owner, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Model not found' });
      const d = await del(owner, id, { steps: [0] });
      expect(d.status).toBe(404);
      expect(d.body).toEqual({ detail: 'Model not found' });
    }
    expect((await list(stranger, model.id)).status).toBe(404);
    const foreignDelete = await del(stranger, model.id, { steps: [0] });
    expect(foreignDelete.status).toBe(404);
    // The owner's checkpoint survived the stranger's attempt.
    expect(checkpointListSchema.parse((await list(owner, model.id)).body).data).toHaveLength(1);

    const anonymous = await call(checkpointsRoute, 'GET', path(model.id), { params: { model_id: model.id } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ detail: 'Not authenticated' });
    const anonymousDelete = await call(checkpointsRoute, 'DELETE', path(model.id), {
      params: { model_id: model.id },
      body: { steps: [0] },
    });
    expect(anonymousDelete.status).toBe(401);
  });
});

describe('DELETE /v1/preview/models/{id}/checkpoints', () => {
  it('deletes the listed steps, counting duplicates once and reporting missing ones in first-appearance order', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await seedCheckpoints(model.id, [1, 2, 3, 4]);
    const res = await del(user, model.id, { steps: [3, 9, 1, 3, 7, 9, 1, 42] });
    expect(res.status).toBe(200);
    expect(deleteCheckpointsResponseSchema.parse(res.body)).toEqual({ deleted_count: 2, not_found_steps: [9, 7, 42] });
    const remaining = checkpointListSchema.parse((await list(user, model.id)).body);
    expect(remaining.data.map((c) => c.step)).toEqual([0, 2, 4]);
  });

  it('is idempotent, and [] deletes nothing', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await seedCheckpoints(model.id, [1, 2]);
    const empty = await del(user, model.id, { steps: [] });
    expect(empty.status).toBe(200);
    expect(deleteCheckpointsResponseSchema.parse(empty.body)).toEqual({ deleted_count: 0, not_found_steps: [] });

    const first = await del(user, model.id, { steps: [1] });
    expect(first.body).toEqual({ deleted_count: 1, not_found_steps: [] });
    const again = await del(user, model.id, { steps: [1] });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ deleted_count: 0, not_found_steps: [1] });
    expect(checkpointListSchema.parse((await list(user, model.id)).body).data.map((c) => c.step)).toEqual([0, 2]);
  });

  it('allows deleting step 0 and the latest step; latest then moves to the highest remaining step', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await seedCheckpoints(model.id, [1, 2, 3]);
    const res = await del(user, model.id, { steps: [0, 3] });
    expect(res.body).toEqual({ deleted_count: 2, not_found_steps: [] });
    const latest = checkpointListSchema.parse((await list(user, model.id, { limit: 1, order: 'desc' })).body);
    expect(latest.data.map((c) => c.step)).toEqual([2]);
    const summary = await call(modelRoute, 'GET', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(modelSummarySchema.parse(summary.body)).toMatchObject({ latest_step: 2, checkpoint_count: 2 });

    await del(user, model.id, { steps: [1, 2] });
    const none = await call(modelRoute, 'GET', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(modelSummarySchema.parse(none.body)).toMatchObject({ latest_step: null, checkpoint_count: 0 });
  });

  it('reports steps that cannot exist (negative, beyond any integer column) as not found', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await del(user, model.id, { steps: [-1, 3_000_000_000, 0, Number.MAX_SAFE_INTEGER] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted_count: 1, not_found_steps: [-1, 3_000_000_000, Number.MAX_SAFE_INTEGER] });
  });

  it('leaves other models alone', async () => {
    const user = await createUser();
    const a = await createModel(user);
    const b = await createModel(user);
    await seedCheckpoints(a.id, [1]);
    await seedCheckpoints(b.id, [1]);
    await del(user, a.id, { steps: [0, 1] });
    expect(checkpointListSchema.parse((await list(user, b.id)).body).data.map((c) => c.step)).toEqual([0, 1]);
  });

  it('validates the body: required, steps required, integers only', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const params = { model_id: model.id };

    const noBody = await call(checkpointsRoute, 'DELETE', path(model.id), { key: user.key, params });
    expect(noBody.status).toBe(422);
    expect(noBody.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);

    const noSteps = await del(user, model.id, { keep: [0] });
    expect(noSteps.status).toBe(422);
    expect(noSteps.body.detail).toEqual([{ loc: ['body', 'steps'], msg: 'Field required', type: 'missing' }]);

    const word = await del(user, model.id, { steps: [1, 'two'] });
    expect(word.status).toBe(422);
    expect(word.body.detail[0]).toMatchObject({
      loc: ['body', 'steps', 1],
      type: 'int_parsing',
      msg: 'Input should be a valid integer, unable to parse string as an integer',
    });

    const fraction = await del(user, model.id, { steps: [1.5] });
    expect(fraction.status).toBe(422);
    expect(fraction.body.detail[0]).toMatchObject({ loc: ['body', 'steps', 0], type: 'int_from_float' });

    const notList = await del(user, model.id, { steps: 3 });
    expect(notList.status).toBe(422);
    expect(notList.body.detail[0]).toMatchObject({ loc: ['body', 'steps'], type: 'list_type' });

    const malformed = await call(checkpointsRoute, 'DELETE', path(model.id), {
      key: user.key,
      params,
      rawBody: '{"steps": [1,',
    });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error' });

    // Nothing was deleted by any of the rejected requests.
    expect(checkpointListSchema.parse((await list(user, model.id)).body).data).toHaveLength(1);
  });

  it('parses the body as JSON whatever the content type', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await call(checkpointsRoute, 'DELETE', path(model.id), {
      key: user.key,
      params: { model_id: model.id },
      rawBody: JSON.stringify({ steps: [0] }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted_count: 1, not_found_steps: [] });
  });
});
