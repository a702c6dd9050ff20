import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as runMetricsRepo from '@/lib/db/repositories/run-metrics';
import { gradientMarkKnots } from '@/lib/db/repositories/gradient-marks';
import { gradientRunId } from '@/lib/db/repositories/models';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { HistoryAxis } from '@/lib/schemas/trajectories';
import { rewardBands } from '@/lib/db/repositories/trajectory-steps';
import { ROLLUP_WIDTHS, type SeriesSummary } from '@/lib/db/repositories/run-metrics';
import type { Principal } from './accounts';
import { downsampleBucketCount, downsampleSummaries, pointSummary, type BucketSummary, type Point } from './downsample';
import { requireModel } from './models';
import { lengthPinningOf } from './length-pinning';

/**
 * How many stored rows one series may read per point asked for. With rollup widths a factor 8 apart, the
 * chosen width then yields between maxPoints/2 and 4 × maxPoints rows: source buckets at least as fine as the
 * chart's own, and a read that stays small whatever the series' length.
 */
const ROWS_PER_POINT = 4;

export interface HistoryQuery {
  axis?: HistoryAxis;
  keys?: string;
  max_points: number;
  from_step?: number;
  to_step?: number;
}

/**
 * The run's metric history, each series reduced on the server to at most `max_points` points (min, max, first
 * and last kept), optionally within a step range for a zoomed chart. Reads rollups, not points, for long series.
 */
export async function getHistory(principal: Principal, modelId: string, q: HistoryQuery) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  if (q.from_step !== undefined && q.to_step !== undefined && q.from_step > q.to_step) {
    throw ApiError.valueError(['query', 'to_step'], 'to_step must be greater than or equal to from_step');
  }
  const perGradientStep = q.axis === 'gradient_step';
  const runId = perGradientStep ? gradientRunId(model.id) : model.runId;
  const summaries = await runMetricsRepo.seriesSummaries(db, runId);
  const byName = new Map(summaries.map((s) => [s.name, s]));
  const names = q.keys
    ? q.keys
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean)
    : summaries.map((s) => s.name);
  const zoomed = q.from_step !== undefined || q.to_step !== undefined;
  // Whole series (the page's first view of every chart) are reduced in the database, all in one query.
  const whole = zoomed
    ? new Map<string, Point[]>()
    : await wholeSeries(
        db,
        runId,
        names.flatMap((n) => byName.get(n) ?? []),
        q.max_points,
      );
  const series = [];
  for (const name of names) {
    const summary = byName.get(name);
    if (!summary) series.push({ name, total_points: 0, points: [] });
    else if (!zoomed) series.push({ name, total_points: summary.n, points: whole.get(name) ?? [] });
    else series.push({ name, ...(await readSeries(db, runId, summary, q)) });
  }
  if (perGradientStep)
    return {
      run_id: runId,
      series,
      bands: [],
      segments: await segmentsOf(db, model.id),
      marks: await gradientMarkKnots(db, model.id, q.max_points),
      length_pinning: [],
    };
  return {
    run_id: runId,
    series,
    bands: await bandsFor(db, model.id, names, byName, q),
    segments: [],
    marks: [],
    // The whole run's view only: a zoomed or key-filtered chart request does not need it.
    length_pinning: zoomed || q.keys ? [] : await lengthPinningOf(model.id),
  };
}

/** Which job each stretch of the training curve is, and the checkpoint it ended in (a few rows per model). */
async function segmentsOf(db: DbOrTx, modelId: string) {
  const jobs = await trainingRepo.jobsOnTrainingCurve(db, modelId);
  return jobs.map((j) => ({
    job_id: j.id,
    type: j.kind,
    status: j.status,
    first_x: j.firstGradientX + 1,
    last_x: j.firstGradientX + j.completedSteps,
    checkpoint_step: j.status === 'COMPLETED' ? j.resultStep : null,
  }));
}

/**
 * The reward band (p10 to p90 of the trajectories' rewards) of each requested `{split}/reward` series, bucketed so
 * that it has at most about `max_points` points over the series' steps (or the zoomed range).
 */
async function bandsFor(
  db: DbOrTx,
  modelId: string,
  names: string[],
  byName: Map<string, SeriesSummary>,
  q: HistoryQuery,
) {
  const rewardSeries = names.flatMap((name) => {
    const split = /^([^/]+)\/reward$/.exec(name)?.[1];
    const summary = byName.get(name);
    return split && summary ? [{ name, split, summary }] : [];
  });
  if (rewardSeries.length === 0) return [];
  const first = Math.max(q.from_step ?? 0, Math.min(...rewardSeries.map((r) => r.summary.firstStep)));
  const last = Math.min(q.to_step ?? Infinity, Math.max(...rewardSeries.map((r) => r.summary.lastStep)));
  const width = Math.max(1, Math.ceil((last - first + 1) / q.max_points));
  const points = await rewardBands(db, modelId, {
    splits: rewardSeries.map((r) => r.split),
    width,
    fromStep: q.from_step,
    toStep: q.to_step,
  });
  return rewardSeries
    .map(({ name, split }) => ({
      name,
      points: points.filter((p) => p.split === split).map((p) => [p.step, p.p10, p.p90] as [number, number, number]),
    }))
    .filter((band) => band.points.length > 0);
}

async function wholeSeries(db: DbOrTx, runId: string, summaries: SeriesSummary[], maxPoints: number) {
  const cap = ROWS_PER_POINT * maxPoints;
  const plans = summaries.map((s) => {
    const span = s.lastStep - s.firstStep + 1;
    // A short series comes back whole: one bucket per step.
    if (s.n <= maxPoints)
      return { name: s.name, width: 1, firstStep: s.firstStep, lastStep: s.lastStep, buckets: span };
    const width =
      s.n <= cap ? 1 : (ROLLUP_WIDTHS.find((w) => span / w <= cap) ?? ROLLUP_WIDTHS[ROLLUP_WIDTHS.length - 1]);
    return {
      name: s.name,
      width,
      firstStep: s.firstStep,
      lastStep: s.lastStep,
      buckets: downsampleBucketCount(maxPoints),
    };
  });
  const extremes = await runMetricsRepo.bucketExtremes(db, runId, plans);
  const out = new Map<string, Point[]>();
  for (const s of summaries) {
    const inner = (extremes.get(s.name) ?? []).filter(([step]) => step > s.firstStep && step < s.lastStep);
    const points: Point[] = [[s.firstStep, s.firstValue], ...inner];
    if (s.lastStep !== s.firstStep) points.push([s.lastStep, s.lastValue]);
    out.set(s.name, points);
  }
  return out;
}

async function readSeries(
  db: DbOrTx,
  runId: string,
  s: SeriesSummary,
  q: HistoryQuery,
): Promise<{ total_points: number; points: Point[] }> {
  const lo = Math.max(s.firstStep, q.from_step ?? 0);
  const hi = Math.min(s.lastStep, q.to_step ?? Number.MAX_SAFE_INTEGER);
  if (lo > hi) return { total_points: 0, points: [] };
  const cap = ROWS_PER_POINT * q.max_points;
  const whole = lo === s.firstStep && hi === s.lastStep;
  // Few enough points to read them all (the step range bounds a zoomed read: steps are distinct).
  if ((whole ? s.n : hi - lo + 1) <= cap) {
    const rows = await runMetricsRepo.seriesPoints(db, runId, s.name, lo, hi);
    const points = rows.map((r): Point => [r.step, r.value]);
    return {
      total_points: points.length,
      points: points.length <= q.max_points ? points : downsampleSummaries(points.map(pointSummary), q.max_points),
    };
  }

  const width = ROLLUP_WIDTHS.find((w) => (hi - lo + 1) / w <= cap) ?? ROLLUP_WIDTHS[ROLLUP_WIDTHS.length - 1];
  // Buckets wholly inside [lo, hi] come from the rollups; a bucket cut by the range's edge is read as points,
  // unless the series has nothing beyond that edge (then the bucket is whole anyway).
  const leftCut = lo > s.firstStep && lo % width !== 0;
  const rightCut = hi < s.lastStep && (hi + 1) % width !== 0;
  const fromBucket = leftCut ? Math.ceil(lo / width) : Math.floor(lo / width);
  const toBucket = rightCut ? Math.floor((hi + 1) / width) - 1 : Math.floor(hi / width);
  const left = leftCut
    ? await runMetricsRepo.seriesPoints(db, runId, s.name, lo, Math.min(hi, fromBucket * width - 1))
    : [];
  const middle =
    fromBucket <= toBucket ? await runMetricsRepo.seriesRollups(db, runId, s.name, width, fromBucket, toBucket) : [];
  const right =
    rightCut && (toBucket + 1) * width > Math.max(lo, fromBucket * width - 1)
      ? await runMetricsRepo.seriesPoints(db, runId, s.name, Math.max(lo, (toBucket + 1) * width), hi)
      : [];

  const items: BucketSummary[] = [
    ...left.map((r) => pointSummary([r.step, r.value])),
    ...middle.map((r) => ({
      first: [r.firstStep, r.firstValue] as Point,
      min: [r.minStep, r.minValue] as Point,
      max: [r.maxStep, r.maxValue] as Point,
      last: [r.lastStep, r.lastValue] as Point,
    })),
    ...right.map((r) => pointSummary([r.step, r.value])),
  ];
  const total = left.length + right.length + middle.reduce((sum, r) => sum + r.n, 0);
  return { total_points: total, points: downsampleSummaries(items, q.max_points) };
}
