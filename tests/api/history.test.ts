import { and, asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import { getDb } from '@/lib/db/client';
import { rebuildRollups, ROLLUP_WIDTHS, seriesRollups, upsertRunMetrics } from '@/lib/db/repositories/run-metrics';
import { downsampleSummaries } from '@/lib/services/downsample';
import { runMetricRollups, runMetrics } from '@/lib/db/schema';
import { historySchema } from '@/lib/schemas/trajectories';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import { gradientRunId } from '@/lib/db/repositories/models';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { completeJob } from '@/lib/jobs/server/queue';
import { claimOnly } from '../jobs/claim-only';
import { call, createModel, createUser, type TestUser } from '../support/helpers';

function history(user: TestUser, modelId: string, query: Record<string, string | number | undefined> = {}) {
  return call(historyRoute, 'GET', `/v1/preview/models/${modelId}/history`, {
    key: user.key,
    params: { model_id: modelId },
    query,
  });
}

/** The rollups a run should have, worked out in JS from its points (ties keep the earlier step). */
async function expectedRollups(runId: string) {
  const db = await getDb();
  const points = await db
    .select({ name: runMetrics.name, step: runMetrics.step, value: runMetrics.value })
    .from(runMetrics)
    .where(eq(runMetrics.runId, runId))
    .orderBy(asc(runMetrics.name), asc(runMetrics.step));
  const out = new Map<string, Record<string, number>>();
  for (const width of ROLLUP_WIDTHS) {
    for (const p of points) {
      const key = `${width}|${p.name}|${Math.floor(p.step / width)}`;
      const r = out.get(key);
      if (!r) {
        out.set(key, {
          n: 1,
          firstStep: p.step,
          firstValue: p.value,
          minStep: p.step,
          minValue: p.value,
          maxStep: p.step,
          maxValue: p.value,
          lastStep: p.step,
          lastValue: p.value,
        });
        continue;
      }
      r.n += 1;
      if (p.value < r.minValue) Object.assign(r, { minStep: p.step, minValue: p.value });
      if (p.value > r.maxValue) Object.assign(r, { maxStep: p.step, maxValue: p.value });
      Object.assign(r, { lastStep: p.step, lastValue: p.value });
    }
  }
  return out;
}

async function storedRollups(runId: string) {
  const db = await getDb();
  const rows = await db.select().from(runMetricRollups).where(eq(runMetricRollups.runId, runId));
  return new Map(
    rows.map(({ runId: _r, width, name, bucket, ...rest }) => [
      `${width}|${name}|${bucket}`,
      rest as Record<string, number>,
    ]),
  );
}

/** Bulk-loads a dense series (as an import would) and builds its rollups once. */
async function loadSeries(runId: string, name: string, steps: number, f: (step: number) => number) {
  const db = await getDb();
  for (let start = 0; start < steps; start += 5000) {
    const rows = [];
    for (let step = start; step < Math.min(steps, start + 5000); step++)
      rows.push({ runId, name, step, value: f(step) });
    await db.insert(runMetrics).values(rows);
  }
  await rebuildRollups(db, runId);
}

describe('run history rollups', () => {
  it('stay equal to a rebuild from the points through appends, out-of-order writes and overwrites', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const db = await getDb();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const steps = Array.from({ length: 300 }, (_, i) => i * 3);
    for (const step of steps) {
      await upsertRunMetrics(db, model.run_id, step, {
        'train/loss': Math.round(rand() * 20) / 4,
        'val/reward': rand(),
      });
    }
    // Out of order, into existing buckets; overwrites that raise a bucket's minimum, lower its maximum, or repeat a value.
    for (let i = 0; i < 60; i++) {
      const step = Math.floor(rand() * 900);
      const value = i % 5 === 0 ? 2.5 : Math.round(rand() * 20) / 4;
      await upsertRunMetrics(db, model.run_id, step, { 'train/loss': value });
    }
    await upsertRunMetrics(db, model.run_id, 5000, { 'train/loss': 1 });

    const expected = await expectedRollups(model.run_id);
    const stored = await storedRollups(model.run_id);
    expect(stored.size).toBe(expected.size);
    for (const [key, row] of expected) expect(stored.get(key), key).toEqual(row);

    // Overwrites inside a transaction that rolls back leave the rollups as they were.
    await db
      .transaction(async (tx) => {
        await upsertRunMetrics(tx, model.run_id, 0, { 'train/loss': -100 });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    const [zero] = await db
      .select()
      .from(runMetricRollups)
      .where(
        and(
          eq(runMetricRollups.runId, model.run_id),
          eq(runMetricRollups.width, 8),
          eq(runMetricRollups.name, 'train/loss'),
          eq(runMetricRollups.bucket, 0),
        ),
      );
    expect(zero.minValue).toBe(expected.get('8|train/loss|0')!.minValue);
  });
});

describe('GET history', () => {
  it('reduces a 30k-point series to the budget with the first, last, lowest and highest points kept', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const f = (s: number) => Math.exp(-s / 10_000) + 0.1 * Math.sin(s / 40);
    const spikes = new Map([
      [12_345, 50],
      [23_456, -50],
    ]);
    await loadSeries(model.run_id, 'train/loss', 30_000, (s) => spikes.get(s) ?? f(s));
    await loadSeries(model.run_id, 'val/loss', 40, f);

    const res = await history(user, model.id, { max_points: 500 });
    expect(res.status).toBe(200);
    const h = historySchema.parse(res.body);
    expect(h.series.map((s) => s.name)).toEqual(['train/loss', 'val/loss']);
    const [train, val] = h.series;
    expect(train.total_points).toBe(30_000);
    expect(train.points.length).toBeLessThanOrEqual(500);
    expect(train.points.length).toBeGreaterThan(400);
    expect(train.points[0]).toEqual([0, f(0)]);
    expect(train.points.at(-1)).toEqual([29_999, f(29_999)]);
    expect(train.points).toContainEqual([12_345, 50]);
    expect(train.points).toContainEqual([23_456, -50]);
    for (let i = 1; i < train.points.length; i++) expect(train.points[i][0]).toBeGreaterThan(train.points[i - 1][0]);
    for (const [step, value] of train.points) expect(value).toBe(spikes.get(step) ?? f(step));
    // The database reduces exactly as the JS reference does over the same rollup rows (width 64 at this budget).
    const rollups = await seriesRollups(await getDb(), model.run_id, 'train/loss', 64, 0, 1e9);
    const reference = downsampleSummaries(
      rollups.map((r) => ({
        first: [r.firstStep, r.firstValue],
        min: [r.minStep, r.minValue],
        max: [r.maxStep, r.maxValue],
        last: [r.lastStep, r.lastValue],
      })),
      500,
    );
    expect(train.points).toEqual(reference);
    // A short series comes back whole.
    expect(val.total_points).toBe(40);
    expect(val.points).toEqual(Array.from({ length: 40 }, (_, s) => [s, f(s)]));
  });

  it('zooms to a step range, exact at edges that cut a rollup bucket', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const f = (s: number) => Math.cos(s / 100);
    // A spike just inside the range's left edge, in a bucket the edge cuts; one just outside it must not show.
    const spikes = new Map([
      [10_001, 9],
      [9_999, 99],
      [19_990, -9],
      [20_001, -99],
    ]);
    await loadSeries(model.run_id, 'train/reward', 50_000, (s) => spikes.get(s) ?? f(s));

    const zoomed = historySchema.parse(
      (await history(user, model.id, { from_step: 10_001, to_step: 19_997, max_points: 100 })).body,
    );
    const [s] = zoomed.series;
    expect(s.total_points).toBe(19_997 - 10_001 + 1);
    expect(s.points.length).toBeLessThanOrEqual(100);
    expect(s.points[0]).toEqual([10_001, 9]);
    expect(s.points.at(-1)).toEqual([19_997, f(19_997)]);
    expect(s.points).toContainEqual([19_990, -9]);
    expect(s.points.every(([step]) => step >= 10_001 && step <= 19_997)).toBe(true);

    // A narrow range is read point by point and returned whole.
    const narrow = historySchema.parse((await history(user, model.id, { from_step: 9_990, to_step: 10_010 })).body);
    expect(narrow.series[0].points).toHaveLength(21);
    expect(narrow.series[0].points).toContainEqual([9_999, 99]);
    // Beyond the series: nothing, not an error.
    const beyond = historySchema.parse((await history(user, model.id, { from_step: 60_000 })).body);
    expect(beyond.series[0]).toEqual({ name: 'train/reward', total_points: 0, points: [] });
  });

  it('refuses a reversed or negative range with a 422 naming the field', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const reversed = await history(user, model.id, { from_step: 10, to_step: 5 });
    expect(reversed.status).toBe(422);
    expect(reversed.body.detail[0]).toMatchObject({ loc: ['query', 'to_step'] });
    const negative = await history(user, model.id, { from_step: -1 });
    expect(negative.status).toBe(422);
    expect(negative.body.detail[0]).toMatchObject({ loc: ['query', 'from_step'] });
  });
});

describe('the training curve: history?axis=gradient_step', () => {
  it("puts every job's gradient steps on one axis with a segment per job; the rollups stay exact in batches", async () => {
    const user = await createUser();
    const model = await createModel(user);
    const protocol = claimOnly(inProcessProtocol(`test:${model.id}`), model.id);
    const submit = async () => {
      const res = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
        key: user.key,
        body: { model_id: model.id, trajectory_groups: [] },
      });
      expect(res.status).toBe(200);
      const job = await protocol.claim();
      expect(job?.id).toBe(res.body.id);
      return job!.id;
    };
    // x's value is a function of x, with one spike, so every point can be checked and the spike must survive.
    const lossAt = (x: number) => (x === 333 ? 1000 : 5 - x / 200);
    let x = 0;
    const steps = async (jobId: string, n: number) => {
      const events = Array.from({ length: n }, () => {
        x++;
        return {
          type: 'gradient_step' as const,
          data: { loss: lossAt(x), ...(x % 100 === 0 ? { 'val/loss': x } : {}) },
        };
      });
      await protocol.appendEvents(jobId, events);
    };
    const started = (jobId: string, n: number) =>
      protocol.appendEvents(jobId, [{ type: 'training_started', data: { num_sequences: n } }]);

    // Batches of 1, 9, 90 and 600 cross every rollup width's bucket boundaries.
    const first = await submit();
    await started(first, 700);
    for (const n of [1, 9, 90, 600]) await steps(first, n);
    // No weights file: the checkpoint row is what this test needs (a null key is the queue's "copy nothing").
    await completeJob(first, `test:${model.id}`, { artifactKey: null });
    const failed = await submit();
    await started(failed, 5);
    await steps(failed, 5);
    await protocol.fail(failed, 'boom');
    const running = await submit();
    await started(running, 10);
    await steps(running, 3);

    const res = await history(user, model.id, { axis: 'gradient_step', max_points: 10_000 });
    expect(res.status).toBe(200);
    const body = historySchema.parse(res.body);
    const loss = body.series.find((s) => s.name === 'loss')!;
    expect(loss.total_points).toBe(708);
    expect(loss.points).toEqual(Array.from({ length: 708 }, (_, i) => [i + 1, lossAt(i + 1)]));
    expect(body.series.find((s) => s.name === 'val/loss')!.points).toEqual(
      [100, 200, 300, 400, 500, 600, 700].map((v) => [v, v]),
    );
    expect(body.segments).toEqual([
      { job_id: first, type: 'rl', status: 'COMPLETED', first_x: 1, last_x: 700, checkpoint_step: 1 },
      { job_id: failed, type: 'rl', status: 'FAILED', first_x: 701, last_x: 705, checkpoint_step: null },
      { job_id: running, type: 'rl', status: 'RUNNING', first_x: 706, last_x: 708, checkpoint_step: null },
    ]);
    expect(await storedRollups(gradientRunId(model.id))).toEqual(await expectedRollups(gradientRunId(model.id)));

    // Downsampled on the server: few points, the first, last and the spike kept.
    const small = historySchema.parse((await history(user, model.id, { axis: 'gradient_step', max_points: 50 })).body);
    const points = small.series.find((s) => s.name === 'loss')!.points;
    expect(points.length).toBeLessThanOrEqual(50);
    expect(points).toContainEqual([333, 1000]);
    expect(points[0]).toEqual([1, lossAt(1)]);
    expect(points.at(-1)).toEqual([708, lossAt(708)]);

    // The default axis is the run's, one point per checkpoint, without segments.
    const perCheckpoint = historySchema.parse((await history(user, model.id)).body);
    expect(perCheckpoint.series.map((s) => s.name)).not.toContain('loss');
    expect(perCheckpoint.segments).toEqual([]);
    expect((await history(user, model.id, { axis: 'epoch' })).status).toBe(422);
  });
});
