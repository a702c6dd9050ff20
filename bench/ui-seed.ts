/**
 * Seeds the UI benchmark database before the server opens it: a user with a key and a model whose run has
 * `series` metric series of `points` steps each (half train/*, half val/*). Prints ids as JSON.
 */
import { closeDb, getDb } from '@/lib/db/client';
import { rebuildRollups } from '@/lib/db/repositories/run-metrics';
import { runMetrics } from '@/lib/db/schema';
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
  await closeDb();
  console.log(JSON.stringify({ key, modelId: model.id }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
