/**
 * The database's share of a list route, for bench:api: each list route's page query, sent from one process with no
 * HTTP, no authentication and no JSON in between, CONNECTIONS at a time (as the HTTP cases keep CONNECTIONS in
 * flight). A route that runs its query for every request cannot outrun it, as no framework outruns the bare Node
 * server: bench:api prints each beside /v1/health with the bound it sets on its route (its explanation under the
 * table).
 *
 * Run as a process of its own while no server is running (PGlite must never be open in two processes at once):
 *   tsx --conditions=react-server bench/db-alone.ts <seed JSON> <connections> <seconds | "n<requests>">
 * Prints one JSON line: [{ case, rps, p50, p99 }], `case` one of models, checkpoints, events.
 */
import { eq } from 'drizzle-orm';
import { closeDb, getDb } from '@/lib/db/client';
import { pageEventsInScope } from '@/lib/db/repositories/job-event-pages';
import * as modelsRepo from '@/lib/db/repositories/models';
import { models } from '@/lib/db/schema';
import { percentile } from './percentile';

interface Seed {
  modelId: string;
  largeJobId: string;
  deepEventId: string;
}

async function main() {
  const seed = JSON.parse(process.argv[2]) as Seed;
  const connections = Number(process.argv[3]);
  const budget = process.argv[4];
  const db = await getDb();
  const [owner] = await db.select({ entityId: models.entityId }).from(models).where(eq(models.id, seed.modelId));
  const entityIds = [owner.entityId];
  // The queries the services run for the HTTP cases of the same names (lib/services/models.ts, checkpoints.ts,
  // training-jobs.ts), with their one-row-more page sizes.
  const cases: [string, () => Promise<unknown>][] = [
    [
      'models',
      () => modelsRepo.listModels(db, { entityIds, limit: 21, best: { metric: undefined, direction: undefined } }),
    ],
    [
      'checkpoints',
      () => modelsRepo.pageCheckpointsInScope(db, { modelId: seed.modelId, entityIds, order: 'asc', limit: 21 }),
    ],
    [
      'events',
      () => pageEventsInScope(db, { jobId: seed.largeJobId, entityIds, afterId: seed.deepEventId, limit: 100 }),
    ],
  ];
  const rows = [];
  for (const [name, query] of cases) {
    for (let i = 0; i < 200; i++) await query();
    const latencies: number[] = [];
    const started = performance.now();
    const total = budget.startsWith('n') ? Number(budget.slice(1)) : Infinity;
    const until = budget.startsWith('n') ? Infinity : started + Number(budget) * 1000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (sent < total && performance.now() < until) {
          sent++;
          const t = performance.now();
          await query();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    // Whole milliseconds, as the HTTP cases report them.
    const at = (p: number) => Math.round(percentile(latencies, p));
    rows.push({ case: name, rps: Math.round(latencies.length / elapsed), p50: at(50), p99: at(99) });
  }
  await closeDb();
  console.log(JSON.stringify(rows));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
