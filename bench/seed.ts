/**
 * Seeds a benchmark database directly (before the server opens it): one user with a key, a model with
 * `checkpoints` checkpoints, a small job with `smallEvents` events and a large one with `largeEvents`.
 * Prints the ids as JSON on the last line. Run as a separate process: PGlite must never be open in two
 * processes at once.
 *   tsx bench/seed.ts <checkpoints> <smallEvents> <largeEvents>
 */
import { sql } from 'drizzle-orm';
import { getDb, closeDb } from '@/lib/db/client';
import { models } from '@/lib/db/schema';
import { eq } from 'drizzle-orm';
import { createApiKey, signUp } from '@/lib/services/accounts';
import { createModel } from '@/lib/services/models';
import { principalFromSession } from '@/lib/services/accounts';
import * as trainingRepo from '@/lib/db/repositories/training';

async function main() {
  const nCheckpoints = Number(process.argv[2] ?? 1000);
  const nSmall = Number(process.argv[3] ?? 1000);
  const nLarge = Number(process.argv[4] ?? 100_000);
  const db = await getDb();
  const handle = `bench-${Date.now().toString(36)}`;
  const { token } = await signUp({ email: `${handle}@bench.test`, password: 'benchmark-password', username: handle });
  const principal = (await principalFromSession(token))!;
  const { key } = await createApiKey(principal.userId, { name: 'bench' });
  const model = await createModel(principal, {
    project: 'bench',
    name: 'bench-model',
    base_model: 'tuneboard/tiny-random',
  });

  // Generated inside the database: a million rows in one statement instead of a million parameters.
  await db.execute(sql`
    insert into checkpoints (model_id, step, metrics)
    select ${model.id}::uuid, s, json_build_object('train/loss', 1.0 / s, 'val/reward', sin(s))
    from generate_series(1, ${nCheckpoints}::int) s`);
  await db
    .update(models)
    .set({ lastStep: nCheckpoints, checkpointCount: nCheckpoints + 1 })
    .where(eq(models.id, model.id));

  // The large job first: the small job's events then come after a million others, where a page query that walks
  // the primary key instead of the job's index reads them all (lib/db/repositories/job-event-pages.ts, jobRange).
  const jobs: { id: string; events: number }[] = [];
  for (const n of [nLarge, nSmall]) {
    const job = await trainingRepo.insertJob(db, {
      entityId: principal.personalEntity.id,
      modelId: model.id,
      kind: 'rl',
      config: {},
      status: 'RUNNING',
    });
    for (let start = 0; start < n; start += 100_000) {
      const end = Math.min(start + 100_000, n);
      await db.execute(sql`
        insert into job_events (job_id, type, data)
        select ${job.id}::uuid,
               case when i = 0 then 'training_started' else 'gradient_step' end,
               case when i = 0 then jsonb_build_object('num_sequences', ${n - 1}::int)
                    else jsonb_build_object('loss', 1.0 / i, 'grad_norm', 0.5, 'learning_rate', 5e-6) end
        from generate_series(${start}::int, ${end - 1}::int) i order by i`);
    }
    jobs.push({ id: job.id, events: n });
  }
  // The event `offset` places after a job's first: a cursor to page from.
  const eventAt = async (jobId: string, offset: number) => {
    const [first] = await trainingRepo.listEvents(db, jobId, { afterSeq: undefined, limit: 1 });
    const [event] = await trainingRepo.listEvents(db, jobId, { afterSeq: first.seq + offset, limit: 1 });
    return event;
  };
  const [large, small] = jobs;
  // A cursor deep in the large job: paging from there must cost what paging from the start costs.
  const deepEvent = await eventAt(large.id, large.events - 200);
  // And one near its start: a page there must not cost more either (it did without planner statistics).
  const earlyEvent = await eventAt(large.id, 100);
  // The same cursor in the small job: a page from a cursor is compared with a page from a cursor (finding the cursor's
  // event is part of its cost, whatever the job's size).
  const smallCursorEvent = await eventAt(small.id, 100);
  // Statistics as they would be shortly after a bulk load (autovacuum on PostgreSQL, the server's own check on
  // PGlite, lib/db/pglite-maintenance.ts): the routes are measured in their steady state.
  await db.execute(sql`analyze`);
  await closeDb();
  console.log(
    JSON.stringify({
      key,
      modelId: model.id,
      smallJobId: small.id,
      largeJobId: large.id,
      deepEventId: deepEvent.id,
      earlyEventId: earlyEvent.id,
      smallCursorEventId: smallCursorEvent.id,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
