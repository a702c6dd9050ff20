import 'server-only';
import { getDb } from '@/lib/db/client';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { SftTimingDto } from '@/lib/schemas/sft-timing';

/** How many of a base model's latest SFT jobs are measured. */
const MEASURED_JOBS = 20;

interface Timing {
  workerId: string | null;
  steps: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  firstStepAt: string | Date | null;
  lastStepAt: string | Date | null;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const ms = (t: string | Date | null) => (t === null ? null : new Date(t).getTime());

/**
 * The pace of a base model's SFT jobs, per worker, from what they took (issue 41: a fixed "28 ms a step" estimate
 * said "about 1 s" for a job of 17.9 s): the time between a job's first and last gradient_step over its steps, and
 * the rest of its run (loading the model, saving the checkpoint) as overhead. Medians, robust to one slow job.
 * A job with one step has no step interval: its whole run is overhead and it does not set the step time.
 */
export function sftPace(rows: readonly Timing[]): SftTimingDto['workers'] {
  const byWorker = new Map<string | null, { perStep: number[]; overhead: number[] }>();
  for (const r of rows) {
    const start = ms(r.startedAt);
    const end = ms(r.finishedAt);
    const first = ms(r.firstStepAt);
    const last = ms(r.lastStepAt);
    if (start === null || end === null || first === null || last === null || end < start) continue;
    const entry = byWorker.get(r.workerId) ?? { perStep: [], overhead: [] };
    byWorker.set(r.workerId, entry);
    const perStep = r.steps >= 2 ? Math.max(0, last - first) / (r.steps - 1) : null;
    if (perStep !== null) entry.perStep.push(perStep);
    entry.overhead.push(Math.max(0, end - start - (perStep ?? 0) * r.steps));
  }
  const out: SftTimingDto['workers'] = [];
  // Map order is insertion order: rows come newest first, so the latest job's worker leads.
  for (const [workerId, { perStep, overhead }] of byWorker) {
    if (perStep.length === 0) continue;
    out.push({
      worker_id: workerId,
      jobs: overhead.length,
      seconds_per_step: median(perStep) / 1000,
      overhead_seconds: median(overhead) / 1000,
    });
  }
  return out;
}

export async function sftTiming(baseModel: string): Promise<SftTimingDto> {
  const db = await getDb();
  const rows = await trainingRepo.recentSftTimings(db, baseModel, MEASURED_JOBS);
  return { base_model: baseModel, workers: sftPace(rows) };
}
