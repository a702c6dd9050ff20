import fs from 'node:fs';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as compareRoute from '@/app/v1/preview/compare/route';
import * as curvesRoute from '@/app/v1/preview/compare/curves/route';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import { getDb } from '@/lib/db/client';
import { gradientStepMarks } from '@/lib/db/schema';
import { completeJob } from '@/lib/jobs/server/queue';
import { compareCurvesSchema, comparisonSchema } from '@/lib/schemas/comparison';
import { historySchema } from '@/lib/schemas/trajectories';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { claimOnly } from '../jobs/claim-only';
import { call, createModel, createUser, uniqueName, type TestUser } from '../support/helpers';

const compare = (user: TestUser, query: Record<string, string>) =>
  call(compareRoute, 'GET', '/v1/preview/compare', { key: user.key, query });
const curves = (user: TestUser, query: Record<string, string>) =>
  call(curvesRoute, 'GET', '/v1/preview/compare/curves', { key: user.key, query });

/** One RL job of `steps` gradient steps on `model`, each with its loss and trainable tokens, completed. */
async function train(
  user: TestUser,
  modelId: string,
  config: Record<string, unknown>,
  steps: { loss: number; num_trainable_tokens?: number }[],
) {
  const protocol = claimOnly(inProcessProtocol(`test:${modelId}`), modelId);
  const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
    key: user.key,
    body: { model_id: modelId, trajectory_groups: [], experimental_config: config },
  });
  expect(res.status).toBe(200);
  const job = await protocol.claim();
  await protocol.appendEvents(job!.id, [{ type: 'training_started', data: { num_sequences: steps.length } }]);
  // Two batches: the marks must continue the token count across them.
  const half = Math.ceil(steps.length / 2);
  for (const batch of [steps.slice(0, half), steps.slice(half)])
    if (batch.length)
      await protocol.appendEvents(
        job!.id,
        batch.map((data) => ({ type: 'gradient_step', data })),
      );
  await completeJob(job!.id, `test:${modelId}`, { artifactKey: null });
  return job!.id;
}

describe('run comparison: GET /v1/preview/compare and the training curve’s marks', () => {
  it('gives each run its latest config, status, duration, final and best metrics; marks count tokens', async () => {
    const user = await createUser();
    const project = uniqueName('cmp');
    const a = await createModel(user, { project });
    const b = await createModel(user, { project });
    await train(user, a.id, { learning_rate: 1e-5 }, [
      { loss: 3, num_trainable_tokens: 100 },
      { loss: 1, num_trainable_tokens: 50 },
      { loss: 2, num_trainable_tokens: 25 },
    ]);
    await train(user, b.id, { learning_rate: 2e-5, lora_rank: 8 }, [
      { loss: 0.5, num_trainable_tokens: 10 },
      { loss: 0.7 },
    ]);

    const res = await compare(user, { model_ids: `${b.id},${a.id}` });
    expect(res.status).toBe(200);
    const body = comparisonSchema.parse(res.body);
    // In the order asked for.
    expect(body.runs.map((r) => r.model_id)).toEqual([b.id, a.id]);
    const [runB, runA] = body.runs;
    expect(runA).toMatchObject({ status: 'COMPLETED', jobs: 1, gradient_steps: 3, project });
    expect(runA.config).toMatchObject({ kind: 'rl', learning_rate: 1e-5, base_model: a.base_model });
    expect(runB.config).toMatchObject({ learning_rate: 2e-5, lora_rank: 8 });
    // Storage keys are not configuration.
    expect(Object.keys(runA.config)).not.toContain('extra_settings');
    expect(runA.metrics.find((m) => m.name === 'loss')).toEqual({ name: 'loss', final: 2, best: 1, direction: 'min' });
    expect(runA.duration_s).toBeGreaterThanOrEqual(0);
    expect(runA.started_at).not.toBeNull();

    // The marks: x, a time that never goes back, and the running token count (a step without a count adds 0).
    const hist = historySchema.parse(
      (
        await call(historyRoute, 'GET', `/v1/preview/models/${a.id}/history`, {
          key: user.key,
          params: { model_id: a.id },
          query: { axis: 'gradient_step' },
        })
      ).body,
    );
    expect(hist.marks.map(([x, , tokens]) => [x, tokens])).toEqual([
      [1, 100],
      [2, 150],
      [3, 175],
    ]);
    const times = hist.marks.map(([, t]) => t);
    expect([...times].sort((p, q) => p - q)).toEqual(times);
    expect(Math.abs(times[0] - Date.now())).toBeLessThan(60_000);
    const histB = historySchema.parse(
      (
        await call(historyRoute, 'GET', `/v1/preview/models/${b.id}/history`, {
          key: user.key,
          params: { model_id: b.id },
          query: { axis: 'gradient_step' },
        })
      ).body,
    );
    expect(histB.marks.map(([x, , tokens]) => [x, tokens])).toEqual([
      [1, 10],
      [2, 10],
    ]);
    // The per-checkpoint history has no marks.
    const perCheckpoint = await call(historyRoute, 'GET', `/v1/preview/models/${a.id}/history`, {
      key: user.key,
      params: { model_id: a.id },
    });
    expect(perCheckpoint.body.marks).toEqual([]);

    // A project compares its models, oldest first.
    const byProject = comparisonSchema.parse((await compare(user, { project })).body);
    expect(byProject.runs.map((r) => r.model_id)).toEqual([a.id, b.id]);
    expect(byProject.omitted).toBe(0);
  });

  it('thins the marks of a long curve to max_points, first and last kept', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await train(
      user,
      model.id,
      {},
      Array.from({ length: 95 }, () => ({ loss: 1, num_trainable_tokens: 2 })),
    );
    const res = await call(historyRoute, 'GET', `/v1/preview/models/${model.id}/history`, {
      key: user.key,
      params: { model_id: model.id },
      query: { axis: 'gradient_step', max_points: 10 },
    });
    const marks = historySchema.parse(res.body).marks;
    expect(marks.length).toBeLessThanOrEqual(11);
    expect(marks[0].slice(0, 1).concat(marks[0][2])).toEqual([1, 2]);
    expect([marks.at(-1)![0], marks.at(-1)![2]]).toEqual([95, 190]);
    for (const [x, , tokens] of marks) expect(tokens).toBe(2 * x);
  });

  it('backfills the marks of curves stored before them (the migration’s statement)', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await train(user, model.id, {}, [
      { loss: 1, num_trainable_tokens: 7 },
      { loss: 1 },
      { loss: 1, num_trainable_tokens: 5 },
    ]);
    const db = await getDb();
    const live = await db.select().from(gradientStepMarks).where(eq(gradientStepMarks.modelId, model.id));
    await db.delete(gradientStepMarks).where(eq(gradientStepMarks.modelId, model.id));
    const migration = fs.readFileSync(
      path.join(process.cwd(), 'lib/db/migrations/0015_gradient_step_marks.sql'),
      'utf8',
    );
    const backfill = migration.split('--> statement-breakpoint').at(-1)!;
    expect(backfill).toMatch(/INSERT INTO "gradient_step_marks"/);
    // Other models' marks are already there: only this model's rows may be added.
    await db.execute(sql.raw(backfill.replace('ON CONFLICT', '').replace(/;\s*$/, ' ON CONFLICT DO NOTHING;')));
    const filled = await db.select().from(gradientStepMarks).where(eq(gradientStepMarks.modelId, model.id));
    const key = (rows: typeof live) =>
      rows.map((r) => [r.x, r.tokens, r.recordedAt.getTime()]).sort((p, q) => Number(p[0]) - Number(q[0]));
    expect(key(filled)).toEqual(key(live));
  });

  it('answers bad selections with a 422 naming the parameter', async () => {
    const user = await createUser();
    const a = await createModel(user);
    const b = await createModel(user);
    const other = await createModel(await createUser());
    const cases: [Record<string, string>, (string | number)[], RegExp][] = [
      [{}, ['query'], /either model_ids or project/],
      [{ model_ids: `${a.id},${b.id}`, project: 'p' }, ['query'], /either model_ids or project/],
      [{ model_ids: a.id }, ['query', 'model_ids'], /2 to 8 models \(got 1\)/],
      [{ model_ids: `${a.id},nope` }, ['query', 'model_ids'], /nope is not a model id/],
      [{ model_ids: `${a.id},${a.id}` }, ['query', 'model_ids'], /listed twice/],
      [{ model_ids: `${a.id},${other.id}` }, ['query', 'model_ids'], new RegExp(`no model ${other.id}`)],
      [{ model_ids: Array.from({ length: 9 }, () => crypto.randomUUID()).join(',') }, ['query', 'model_ids'], /got 9/],
      [{ project: 'no-such-project' }, ['query', 'project'], /has 0 models/],
      [{ project: a.project, entity: 'nobody-here' }, ['query', 'entity'], /no team or user named nobody-here/],
      [{ model_ids: `${a.id},${b.id}`, entity: 'x' }, ['query', 'entity'], /goes with project/],
    ];
    for (const [query, loc, msg] of cases) {
      const res = await compare(user, query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
      expect(res.body.detail[0].msg).toMatch(msg);
    }
  });

  it('gives every run’s training curve in one answer, each what its own history says, in the order asked for', async () => {
    const user = await createUser();
    const a = await createModel(user);
    const b = await createModel(user);
    await train(user, a.id, {}, [{ loss: 3 }, { loss: 1 }, { loss: 2 }]);
    await train(user, b.id, {}, [{ loss: 0.5, num_trainable_tokens: 10 }, { loss: 0.7 }]);
    const res = await curves(user, { model_ids: `${b.id},${a.id}`, max_points: '100' });
    expect(res.status).toBe(200);
    const body = compareCurvesSchema.parse(res.body);
    expect(body.runs.map((r) => r.model_id)).toEqual([b.id, a.id]);
    for (const run of body.runs) {
      const own = await call(historyRoute, 'GET', `/v1/preview/models/${run.model_id}/history`, {
        key: user.key,
        params: { model_id: run.model_id },
        query: { axis: 'gradient_step', max_points: '100' },
      });
      const { model_id: _id, ...curve } = run;
      expect(curve).toEqual(historySchema.parse(own.body));
    }
    expect(body.runs[1].series.find((s) => s.name === 'loss')?.points).toEqual([
      [1, 3],
      [2, 1],
      [3, 2],
    ]);
  });

  it('answers bad curve selections with a 422 naming the parameter', async () => {
    const user = await createUser();
    const a = await createModel(user);
    const b = await createModel(user);
    const other = await createModel(await createUser());
    const cases: [Record<string, string>, (string | number)[], RegExp][] = [
      [{}, ['query', 'model_ids'], /./],
      [{ model_ids: a.id }, ['query', 'model_ids'], /2 to 8 models \(got 1\)/],
      [{ model_ids: `${a.id},nope` }, ['query', 'model_ids'], /nope is not a model id/],
      [{ model_ids: `${a.id},${a.id}` }, ['query', 'model_ids'], /listed twice/],
      [{ model_ids: `${a.id},${other.id}` }, ['query', 'model_ids'], new RegExp(`no model ${other.id}`)],
      [{ model_ids: `${a.id},${b.id}`, max_points: '5' }, ['query', 'max_points'], /./],
      [{ model_ids: `${a.id},${b.id}`, max_points: 'many' }, ['query', 'max_points'], /./],
    ];
    for (const [query, loc, msg] of cases) {
      const res = await curves(user, query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(loc);
      expect(res.body.detail[0].msg).toMatch(msg);
    }
  });
});
