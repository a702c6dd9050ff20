import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as modelJobsRoute from '@/app/v1/preview/models/[model_id]/training-jobs/route';
import * as eventsRoute from '@/app/v1/preview/training-jobs/[training_job_id]/events/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import { getDb } from '@/lib/db/client';
import { pageEventsInScope } from '@/lib/db/repositories/job-event-pages';
import { updateJob } from '@/lib/db/repositories/training';
import {
  jobEventListSchema,
  trainingJobListSchema,
  trainingJobSchema,
  type JobEventDto,
} from '@/lib/schemas/training-jobs';
import { accessibleEntityIds } from '@/lib/services/accounts';
import { call, createModel, createRlJob, createUser, principalOf, seedEvents, type TestUser } from '../support/helpers';

function events(user: TestUser, jobId: string, query: Record<string, string | number | undefined> = {}) {
  return call(eventsRoute, 'GET', `/v1/preview/training-jobs/${jobId}/events`, {
    key: user.key,
    params: { training_job_id: jobId },
    query,
  });
}

async function page(user: TestUser, jobId: string, query: Record<string, string | number | undefined> = {}) {
  const res = await events(user, jobId, query);
  expect(res.status).toBe(200);
  return jobEventListSchema.parse(res.body);
}

/** A finished job's history: started, n gradient steps, ended. */
function lifecycle(n: number) {
  return [
    { type: 'training_started' as const, data: { num_sequences: n } },
    ...Array.from({ length: n }, (_, i) => ({
      type: 'gradient_step' as const,
      data: { loss: 1 / (i + 1), grad_norm: 0.5, learning_rate: 5e-6, num_trajectories: 2 },
    })),
    { type: 'training_ended' as const, data: {} },
  ];
}

async function jobWithEvents(n: number) {
  const user = await createUser();
  const model = await createModel(user);
  const jobId = await createRlJob(user, model.id);
  const rows = await seedEvents(jobId, lifecycle(n));
  return { user, model, jobId, ids: rows.map((r) => r.id) };
}

describe('GET /v1/preview/training-jobs/{id}/events', () => {
  it('answers an empty envelope for a queued job', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    expect(await page(user, jobId)).toEqual({ object: 'list', data: [], has_more: false, first_id: '', last_id: '' });
  });

  it('lists events chronologically, 20 per page by default, with {id, type, data, created_at}', async () => {
    const { user, jobId, ids } = await jobWithEvents(23); // 25 events
    const first = await page(user, jobId);
    expect(first.data.map((e) => e.id)).toEqual(ids.slice(0, 20));
    expect(first.has_more).toBe(true);
    expect(first.first_id).toBe(ids[0]);
    expect(first.last_id).toBe(ids[19]);
    expect(first.data[0]).toMatchObject({ type: 'training_started', data: { num_sequences: 23 } });
    expect(first.data[1]).toMatchObject({ type: 'gradient_step', data: { loss: 1, grad_norm: 0.5 } });
    for (const e of first.data) expect(Number.isNaN(Date.parse(e.created_at))).toBe(false);

    const rest = await page(user, jobId, { after: first.last_id });
    expect(rest.data.map((e) => e.id)).toEqual(ids.slice(20));
    expect(rest.data.at(-1)).toMatchObject({ type: 'training_ended', data: {} });
    expect(rest.has_more).toBe(false);

    const all = await page(user, jobId, { limit: 25 });
    expect(all.data).toHaveLength(25);
    expect(all.has_more).toBe(false);
  });

  it('returns strictly the events after the cursor, and nothing after the last one', async () => {
    const { user, jobId, ids } = await jobWithEvents(3); // started, 3 steps, ended
    expect((await page(user, jobId, { after: ids[0] })).data.map((e) => e.id)).toEqual(ids.slice(1));
    expect((await page(user, jobId, { after: ids[2], limit: 1 })).data.map((e) => e.id)).toEqual([ids[3]]);
    expect(await page(user, jobId, { after: ids.at(-1) })).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      first_id: '',
      last_id: '',
    });
  });

  it('replays training_started to a client that did not advance its cursor (no deduplication)', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    const [started] = await seedEvents(jobId, [{ type: 'training_started', data: { num_sequences: 2 } }]);
    expect((await page(user, jobId)).data.map((e) => e.id)).toEqual([started.id]);
    const [s1, s2] = await seedEvents(jobId, lifecycle(2).slice(1, 3));
    // Same request again (the client advances only on gradient_step): training_started comes back.
    expect((await page(user, jobId)).data.map((e) => e.id)).toEqual([started.id, s1.id, s2.id]);
    const [ended] = await seedEvents(jobId, [{ type: 'training_ended', data: {} }]);
    expect((await page(user, jobId, { after: s2.id })).data.map((e) => e.id)).toEqual([ended.id]);
  });

  it('visits every event exactly once when walking pages the way clients do', async () => {
    const { user, jobId, ids } = await jobWithEvents(40); // 42 events
    for (const limit of [1, 5, 20, 42, 100]) {
      const seen: JobEventDto[] = [];
      let after: string | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const p = await page(user, jobId, { limit, after });
        expect(p.data.length).toBeLessThanOrEqual(limit);
        seen.push(...p.data);
        if (p.has_more === false || p.data.length === 0) break;
        after = p.data.at(-1)!.id;
      }
      expect(seen.map((e) => e.id)).toEqual(ids);
    }
  });

  it('ignores a stray order parameter: events stay chronological', async () => {
    const { user, jobId, ids } = await jobWithEvents(2);
    for (const order of ['desc', 'asc', 'sideways']) {
      const p = await page(user, jobId, { order });
      expect(p.data.map((e) => e.id)).toEqual(ids);
    }
  });

  it('lists newest first with newest_first, and pages back with before in either order (extensions)', async () => {
    const { user, jobId, ids } = await jobWithEvents(5); // 7 events
    const newest = [...ids].reverse();
    const first = await page(user, jobId, { newest_first: 'true', limit: 3 });
    expect(first.data.map((e) => e.id)).toEqual(newest.slice(0, 3));
    expect(first.has_more).toBe(true);
    const second = await page(user, jobId, { newest_first: 'true', limit: 3, after: first.last_id });
    expect(second.data.map((e) => e.id)).toEqual(newest.slice(3, 6));
    // Back from the second page: the three newer events, still newest first.
    const back = await page(user, jobId, { newest_first: 'true', limit: 3, before: second.first_id });
    expect(back.data.map((e) => e.id)).toEqual(newest.slice(0, 3));
    expect(back.has_more).toBe(false);
    // Chronological: the page before the last event holds the 3 events preceding it, in order.
    const before = await page(user, jobId, { limit: 3, before: ids[6] });
    expect(before.data.map((e) => e.id)).toEqual(ids.slice(3, 6));
    expect(before.has_more).toBe(true);
    const start = await page(user, jobId, { limit: 3, before: ids[2] });
    expect(start.data.map((e) => e.id)).toEqual(ids.slice(0, 2));
    expect(start.has_more).toBe(false);

    const both = await events(user, jobId, { after: ids[0], before: ids[3] });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(['query', 'before']);
    const unknown = await events(user, jobId, { before: crypto.randomUUID() });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['query', 'before'], msg: 'Value error, Unknown cursor' });
  });

  it('lists one event type with event_type, in either order and across pages (extension)', async () => {
    const { user, jobId, ids } = await jobWithEvents(5); // started, 5 steps, ended
    const steps = ids.slice(1, 6);
    const first = await page(user, jobId, { event_type: 'gradient_step', limit: 2 });
    expect(first.data.map((e) => e.id)).toEqual(steps.slice(0, 2));
    expect(first.data.every((e) => e.type === 'gradient_step')).toBe(true);
    const next = await page(user, jobId, { event_type: 'gradient_step', limit: 2, after: first.last_id });
    expect(next.data.map((e) => e.id)).toEqual(steps.slice(2, 4));
    const newest = await page(user, jobId, { event_type: 'gradient_step', newest_first: 'true', limit: 2 });
    expect(newest.data.map((e) => e.id)).toEqual([steps[4], steps[3]]);
    // A cursor of another type still marks a position.
    const afterStart = await page(user, jobId, { event_type: 'training_ended', after: ids[0] });
    expect(afterStart.data.map((e) => e.id)).toEqual([ids[6]]);
    expect((await page(user, jobId, { event_type: 'training_failed' })).data).toEqual([]);

    const bad = await events(user, jobId, { event_type: 'checkpoint' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'event_type']);
  });

  it('validates limit 1..100 and rejects an unknown cursor', async () => {
    const { user, jobId } = await jobWithEvents(1);
    const cases: [string, string][] = [
      ['0', 'greater_than_equal'],
      ['101', 'less_than_equal'],
      ['abc', 'int_parsing'],
    ];
    for (const [limit, type] of cases) {
      const res = await events(user, jobId, { limit });
      expect(res.status, `limit=${limit}`).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'limit'], type });
    }
    expect((await events(user, jobId, { limit: 100 })).status).toBe(200);

    // An event of another job is not a cursor of this one.
    const otherJob = await createRlJob(user, (await createModel(user)).id);
    const [foreign] = await seedEvents(otherJob, [{ type: 'training_started', data: { num_sequences: 0 } }]);
    for (const after of [crypto.randomUUID(), 'garbage', foreign.id, jobId]) {
      const res = await events(user, jobId, { after });
      expect(res.status, `after=${after}`).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc: ['query', 'after'],
        msg: 'Value error, Unknown cursor',
        type: 'value_error',
      });
    }
  });

  it('writes the followed page (JSON built by the database) exactly as the objects the other orders serialize', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    const awkward = [
      {
        text: 'quote " backslash \\ newline \n tab \t bell \u0001 separator \u2028 emoji 🦙 漢字',
        nested: [1, [2, {}]],
      },
      { fake: '{"id":"00000000-0000-0000-0000-000000000000"}', empty: {}, list: [], none: null, yes: true },
      { small: 1e-7, big: 1e21, int: 123456789012345, neg: -1.5, tenth: 0.1, third: 1 / 3, zero: 0 },
      {},
    ];
    const rows = await seedEvents(
      jobId,
      awkward.map((data) => ({ type: 'gradient_step' as const, data })),
    );
    // Timestamps the database stores with microseconds: toISOString() truncates them to milliseconds.
    const db = await getDb();
    const times = ['2026-01-02 03:04:05.678999+00', '2026-01-02 03:04:05+00', '1999-12-31 23:59:59.9995-05', null];
    for (const [i, at] of times.entries()) {
      if (at) await db.execute(sql`update job_events set created_at = ${at}::timestamptz where id = ${rows[i].id}`);
    }
    const followed = await page(user, jobId, { limit: 10 });
    // The dashboard's orders build objects and JSON.stringify them; reversed, they must read the same.
    const newest = await page(user, jobId, { limit: 10, newest_first: 'true' });
    expect(followed.data).toEqual([...newest.data].reverse());
    expect(followed.data.map((e) => e.data)).toEqual(awkward);
    expect(followed.data.slice(0, 3).map((e) => e.created_at)).toEqual([
      '2026-01-02T03:04:05.678Z',
      '2026-01-02T03:04:05.000Z',
      '2000-01-01T04:59:59.999Z',
    ]);
    expect(followed).toMatchObject({ has_more: false, first_id: rows[0].id, last_id: rows[3].id });
    // The session's time zone does not leak into the text.
    const principal = await principalOf(user);
    const zoned = await db.transaction(async (tx) => {
      await tx.execute(sql`set local timezone = 'Asia/Kolkata'`);
      return pageEventsInScope(tx, { jobId, entityIds: accessibleEntityIds(principal), limit: 10 });
    });
    expect(zoned.kind === 'page' && JSON.parse(`[${zoned.items}]`)).toEqual(followed.data);
    // A page cut short says so, and names its own first and last ids.
    const cut = await page(user, jobId, { limit: 2, after: rows[0].id });
    expect(cut).toMatchObject({ has_more: true, first_id: rows[1].id, last_id: rows[2].id });
  });

  it('answers 404 for unknown, malformed and foreign jobs, and 401 without a key', async () => {
    const { user, jobId } = await jobWithEvents(1);
    const stranger = await createUser();
    for (const [who, id] of [
      [user, crypto.randomUUID()],
      [user, 'not-a-uuid'],
      [stranger, jobId],
    ] as const) {
      const res = await events(who, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Training job not found' });
    }
    const anonymous = await call(eventsRoute, 'GET', '/x', { params: { training_job_id: jobId } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ detail: 'Not authenticated' });
  });
});

describe('deleting a model with open jobs', () => {
  it('fails each QUEUED or RUNNING job with exactly one training_failed event; jobs stay readable', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const queued = await createRlJob(user, model.id);
    const running = await createRlJob(user, model.id);
    const done = await createRlJob(user, model.id);
    const db = await getDb();
    const [started] = await seedEvents(running, [{ type: 'training_started', data: { num_sequences: 3 } }]);
    await updateJob(db, running, { status: 'RUNNING', startedAt: new Date(), numSequences: 3 });
    await seedEvents(done, lifecycle(0));
    await updateJob(db, done, { status: 'COMPLETED', startedAt: new Date(), finishedAt: new Date(), resultStep: 1 });

    const del = await call(modelRoute, 'DELETE', `/v1/preview/models/${model.id}`, {
      key: user.key,
      params: { model_id: model.id },
    });
    expect(del.status).toBe(200);

    const failed = { type: 'training_failed', data: { error_message: 'Model was deleted' } };
    const q = await page(user, queued);
    expect(q.data).toHaveLength(1);
    expect(q.data[0]).toMatchObject(failed);
    const r = await page(user, running);
    expect(r.data.map((e) => e.id)[0]).toBe(started.id);
    expect(r.data).toHaveLength(2);
    expect(r.data[1]).toMatchObject(failed);
    // A finished job gets nothing more: its terminal event stays the last one.
    const d = await page(user, done);
    expect(d.data.map((e) => e.type)).toEqual(['training_started', 'training_ended']);

    for (const id of [queued, running]) {
      const job = await call(jobRoute, 'GET', `/x`, { key: user.key, params: { training_job_id: id } });
      expect(job.status).toBe(200);
      const parsed = trainingJobSchema.parse(job.body);
      expect(parsed).toMatchObject({ id, model_id: model.id, status: 'FAILED', error_message: 'Model was deleted' });
      expect(parsed.finished_at).not.toBeNull();
    }
    const doneJob = trainingJobSchema.parse(
      (await call(jobRoute, 'GET', `/x`, { key: user.key, params: { training_job_id: done } })).body,
    );
    expect(doneJob).toMatchObject({ status: 'COMPLETED', error_message: null, step: 1 });

    // Deleting again is a 404 and emits nothing more.
    const again = await call(modelRoute, 'DELETE', `/x`, { key: user.key, params: { model_id: model.id } });
    expect(again.status).toBe(404);
    expect((await page(user, queued)).data).toHaveLength(1);
    // The jobs list of the deleted model is gone with the model.
    const list = await call(modelJobsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(list.status).toBe(404);
  });

  it('keeps the jobs of other models untouched', async () => {
    const user = await createUser();
    const doomed = await createModel(user);
    const kept = await createModel(user);
    await createRlJob(user, doomed.id);
    const keptJob = await createRlJob(user, kept.id);
    await call(modelRoute, 'DELETE', `/x`, { key: user.key, params: { model_id: doomed.id } });
    expect((await page(user, keptJob)).data).toEqual([]);
    const jobs = await call(modelJobsRoute, 'GET', '/x', { key: user.key, params: { model_id: kept.id } });
    expect(trainingJobListSchema.parse(jobs.body).data.map((j) => [j.id, j.status])).toEqual([[keptJob, 'QUEUED']]);
  });
});
