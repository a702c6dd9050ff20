import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import * as timingRoute from '@/app/v1/preview/sft-training-jobs/timing/route';
import { getDb } from '@/lib/db/client';
import { jobEvents, models, trainingJobs } from '@/lib/db/schema';
import { sftTimingSchema } from '@/lib/schemas/sft-timing';
import { call, createModel, createUser, uniqueName, type TestUser } from '../support/helpers';

/*
 * Issue 41: the SFT form said "about 1 s" for a job of 17.9 s (a fixed 28 ms a step). Its estimate now comes from
 * the base model's completed SFT jobs, per worker: median time per gradient step and median overhead around them.
 */

async function timing(user: TestUser, baseModel: string) {
  const res = await call(timingRoute, 'GET', '/v1/preview/sft-training-jobs/timing', {
    key: user.key,
    query: { base_model: baseModel },
  });
  return res;
}

/** A completed SFT job that took `steps` steps `stepMs` apart, starting `loadMs` after it started and saving for `saveMs`. */
async function seedSftJob(
  modelId: string,
  worker: string,
  t0: number,
  { steps, stepMs, loadMs, saveMs }: { steps: number; stepMs: number; loadMs: number; saveMs: number },
) {
  const db = await getDb();
  const [model] = await db.select().from(models).where(eq(models.id, modelId));
  const firstStep = t0 + loadMs;
  const lastStep = firstStep + (steps - 1) * stepMs;
  const [job] = await db
    .insert(trainingJobs)
    .values({
      entityId: model.entityId,
      modelId,
      kind: 'sft',
      status: 'COMPLETED',
      config: {},
      numSequences: steps,
      completedSteps: steps,
      workerId: worker,
      startedAt: new Date(t0),
      finishedAt: new Date(lastStep + saveMs),
    })
    .returning();
  await db.insert(jobEvents).values(
    Array.from({ length: steps }, (_, i) => ({
      jobId: job.id,
      type: 'gradient_step' as const,
      data: { loss: 1 },
      createdAt: new Date(firstStep + i * stepMs),
    })),
  );
}

describe('GET /v1/preview/sft-training-jobs/timing', () => {
  it("measures a base model's SFT jobs per worker, the latest job's worker first", async () => {
    const user = await createUser();
    const base = `tuneboard/timing-${uniqueName()}`;
    const model = await createModel(user);
    const db = await getDb();
    // The helper's model is on the built-in base; this test's jobs are on a base of their own.
    await db.update(models).set({ baseModel: base }).where(eq(models.id, model.id));
    const t = Date.UTC(2026, 0, 1);
    // Worker A: 50 steps 300 ms apart, 2 s to load and 1 s to save (17.7 s in all), twice; worker B once, faster.
    await seedSftJob(model.id, 'gpu-b', t, { steps: 20, stepMs: 100, loadMs: 500, saveMs: 500 });
    await seedSftJob(model.id, 'gpu-a', t + 60_000, { steps: 50, stepMs: 300, loadMs: 2000, saveMs: 1000 });
    await seedSftJob(model.id, 'gpu-a', t + 120_000, { steps: 50, stepMs: 300, loadMs: 2000, saveMs: 1000 });

    const res = await timing(user, base);
    expect(res.status).toBe(200);
    const body = sftTimingSchema.parse(res.body);
    expect(body.workers.map((w) => w.worker_id)).toEqual(['gpu-a', 'gpu-b']);
    const [a, b] = body.workers;
    expect(a.jobs).toBe(2);
    expect(a.seconds_per_step).toBeCloseTo(0.3, 6);
    // 2 s loading + 1 s saving, less the one step interval the first step's own time is counted as.
    expect(a.overhead_seconds).toBeCloseTo(2.7, 6);
    // So a 50-step job is estimated at its true 17.7 s, not "about 1 s".
    expect(a.overhead_seconds + 50 * a.seconds_per_step).toBeCloseTo(17.7, 6);
    expect(b.seconds_per_step).toBeCloseTo(0.1, 6);
  });

  it('answers an empty list for a base model never trained, and 422 without base_model', async () => {
    const user = await createUser();
    expect(sftTimingSchema.parse((await timing(user, 'no/such-model')).body).workers).toEqual([]);
    const missing = await call(timingRoute, 'GET', '/v1/preview/sft-training-jobs/timing', { key: user.key });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toContain('base_model');
  });
});
