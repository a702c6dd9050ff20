/**
 * Seeds the UI benchmark database before the server opens it: a user with a key and a model whose run has
 * `series` metric series of `points` steps each (half train/*, half val/*). Prints ids as JSON.
 */
import { closeDb, getDb } from '@/lib/db/client';
import { rebuildRollups } from '@/lib/db/repositories/run-metrics';
import { gradientRunId } from '@/lib/db/repositories/models';
import { gradientStepMarks, runMetrics, runs } from '@/lib/db/schema';
import { createApiKey, principalFromSession, signUp } from '@/lib/services/accounts';
import { createModel } from '@/lib/services/models';

async function main() {
  const series = Number(process.argv[2] ?? 20);
  const points = Number(process.argv[3] ?? 100_000);
  const db = await getDb();
  const { token } = await signUp({ email: 'ui-bench@bench.test', password: 'ui-bench-password', username: 'ui-bench' });
  const principal = (await principalFromSession(token))!;
  const { key } = await createApiKey(principal.userId, { name: 'ui-bench' });
  const model = await createModel(principal, {
    project: 'bench',
    name: 'many-points',
    base_model: 'tuneboard/tiny-random',
  });
  for (let s = 0; s < series; s++) {
    const name = `${s % 2 ? 'val' : 'train'}/metric_${Math.floor(s / 2)}`;
    for (let start = 0; start < points; start += 10_000) {
      const rows = [];
      for (let step = start; step < Math.min(points, start + 10_000); step++) {
        rows.push({
          runId: model.run_id!,
          name,
          step,
          value: Math.exp(-step / points) + 0.05 * Math.sin(step / 37 + s),
        });
      }
      await db.insert(runMetrics).values(rows);
    }
  }
  // A bulk load bypasses upsertRunMetrics, so the chart rollups are built once at the end.
  await rebuildRollups(db, model.run_id!);

  // Run comparison: `compareRuns` models whose training curves have `compareSeries` keys of `comparePoints` gradient
  // steps each, with a time and token count per step (the wall-clock and tokens axes).
  const compareRuns = Number(process.argv[4] ?? 8);
  const compareSeries = Number(process.argv[5] ?? 20);
  const comparePoints = Number(process.argv[6] ?? 10_000);
  const compareIds: string[] = [];
  const t0 = Date.now() - 3_600_000;
  for (let r = 0; r < compareRuns; r++) {
    const run = await createModel(principal, {
      project: 'bench-compare',
      name: `run-${r}`,
      base_model: 'tuneboard/tiny-random',
    });
    compareIds.push(run.id);
    const runId = gradientRunId(run.id);
    await db.insert(runs).values({ id: runId, modelId: run.id, kind: 'gradient_steps' });
    for (let s = 0; s < compareSeries; s++) {
      const name = s === 0 ? 'loss' : `metric_${s}`;
      for (let start = 1; start <= comparePoints; start += 10_000) {
        const rows = [];
        for (let x = start; x < Math.min(comparePoints + 1, start + 10_000); x++)
          rows.push({
            runId,
            name,
            step: x,
            value: Math.exp(-x / comparePoints) * (1 + r / 10) + 0.03 * Math.sin(x / 29 + s),
          });
        await db.insert(runMetrics).values(rows);
      }
    }
    await rebuildRollups(db, runId);
    for (let start = 1; start <= comparePoints; start += 10_000) {
      const rows = [];
      for (let x = start; x < Math.min(comparePoints + 1, start + 10_000); x++)
        rows.push({ modelId: run.id, x, recordedAt: new Date(t0 + x * (200 + 20 * r)), tokens: x * 512 });
      await db.insert(gradientStepMarks).values(rows);
    }
  }
  await closeDb();
  console.log(JSON.stringify({ key, modelId: model.id, compareIds }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
