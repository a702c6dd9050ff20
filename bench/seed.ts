/**
 * Seeds a benchmark database directly (before the server opens it): one user with a key, a model with
 * `checkpoints` checkpoints, and one job with `events` events. Prints the ids as JSON on the last line.
 * Run as a separate process: PGlite must never be open in two processes at once.
 */
import { getDb, closeDb } from '@/lib/db/client';
import { checkpoints, jobEvents, models } from '@/lib/db/schema';
import { eq } from 'drizzle-orm';
import { createApiKey, signUp } from '@/lib/services/accounts';
import { createModel } from '@/lib/services/models';
import { principalFromSession } from '@/lib/services/accounts';
import * as trainingRepo from '@/lib/db/repositories/training';

async function main() {
  const nCheckpoints = Number(process.argv[2] ?? 1000);
  const nEvents = Number(process.argv[3] ?? 100_000);
  const db = await getDb();
  const handle = `bench-${Date.now().toString(36)}`;
  const { token } = await signUp({ email: `${handle}@bench.test`, password: 'benchmark-password', username: handle });
  const principal = (await principalFromSession(token))!;
  const { key } = await createApiKey(principal.userId, { name: 'bench' });
  const model = await createModel(principal, { project: 'bench', name: 'bench-model', base_model: 'tuneboard/tiny-random' });

  for (let start = 1; start <= nCheckpoints; start += 1000) {
    const rows = [];
    for (let step = start; step < Math.min(start + 1000, nCheckpoints + 1); step++) {
      rows.push({ modelId: model.id, step, metrics: { 'train/loss': 1 / step, 'val/reward': Math.sin(step) } });
    }
    await db.insert(checkpoints).values(rows);
  }
  await db.update(models).set({ lastStep: nCheckpoints }).where(eq(models.id, model.id));

  const job = await trainingRepo.insertJob(db, {
    entityId: principal.personalEntity.id,
    modelId: model.id,
    kind: 'rl',
    config: {},
    status: 'RUNNING',
  });
  for (let start = 0; start < nEvents; start += 5000) {
    const rows = [];
    for (let i = start; i < Math.min(start + 5000, nEvents); i++) {
      rows.push({
        jobId: job.id,
        type: (i === 0 ? 'training_started' : 'gradient_step') as 'training_started' | 'gradient_step',
        data: i === 0 ? { num_sequences: nEvents - 1 } : { loss: 1 / i, grad_norm: 0.5, learning_rate: 5e-6 },
      });
    }
    await db.insert(jobEvents).values(rows);
  }
  // A cursor deep in the table: paging from here must cost what paging from the start costs.
  const deep = await trainingRepo.listEvents(db, job.id, { afterSeq: undefined, limit: 1 });
  const [{ seq: firstSeq }] = deep;
  const [deepEvent] = await trainingRepo.listEvents(db, job.id, { afterSeq: firstSeq + nEvents - 200, limit: 1 });
  await closeDb();
  console.log(JSON.stringify({ key, modelId: model.id, jobId: job.id, deepEventId: deepEvent.id }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
