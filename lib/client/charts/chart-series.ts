import { smoothEma, type SeriesPoint } from './ema-smoothing';

/** A series as the history endpoint sends it: `[step, value]` pairs in step order. */
export interface HistorySeries {
  name: string;
  total_points: number;
  points: [number, number][];
}

/** The history's reward band of one series: `[step, p10, p90]` in step order. */
export interface HistoryBand {
  name: string;
  points: [number, number, number][];
}

export interface ChartSeries {
  /** The full metric key, `{split}/{metric}`. */
  name: string;
  /** `train`, `val`, … or '' for a key without a split. */
  split: string;
  totalPoints: number;
  points: SeriesPoint[];
  /** p10 to p90 of the trajectories' rewards per step, drawn as a shaded band behind a reward series. */
  band?: { step: number; low: number; high: number }[];
}

/** One chart: every split of one metric name, so train and val of `reward` share axes. */
export interface ChartSpec {
  metric: string;
  series: ChartSeries[];
}

/** `train/reward` → split `train`, metric `reward`; only the first `/` splits, metric names may hold more. */
export function parseSeriesName(name: string): { split: string; metric: string } {
  const slash = name.indexOf('/');
  if (slash <= 0 || slash === name.length - 1) return { split: '', metric: name };
  return { split: name.slice(0, slash), metric: name.slice(slash + 1) };
}

// Train before val before anything else: the order people read training curves in.
const SPLIT_ORDER = ['train', 'val'];
function splitRank(split: string): number {
  const i = SPLIT_ORDER.indexOf(split);
  return i === -1 ? SPLIT_ORDER.length : i;
}

// Reward is what RL runs are judged by; it goes first, the rest alphabetically.
function metricRank(metric: string): number {
  return metric === 'reward' ? 0 : 1;
}

export function groupSeriesIntoCharts(
  series: readonly HistorySeries[],
  bands: readonly HistoryBand[] = [],
): ChartSpec[] {
  const byMetric = new Map<string, ChartSeries[]>();
  const bandOf = new Map(bands.map((b) => [b.name, b.points]));
  for (const s of series) {
    const { split, metric } = parseSeriesName(s.name);
    const list = byMetric.get(metric) ?? [];
    const band = bandOf.get(s.name);
    list.push({
      name: s.name,
      split,
      totalPoints: s.total_points,
      points: s.points.map(([step, value]) => ({ step, value: Number.isFinite(value) ? value : null })),
      ...(band?.length ? { band: band.map(([step, low, high]) => ({ step, low, high })) } : {}),
    });
    byMetric.set(metric, list);
  }
  return [...byMetric.entries()]
    .map(([metric, list]) => ({
      metric,
      series: list.sort((a, b) => splitRank(a.split) - splitRank(b.split) || a.split.localeCompare(b.split)),
    }))
    .sort((a, b) => metricRank(a.metric) - metricRank(b.metric) || a.metric.localeCompare(b.metric));
}

/** On a log axis a value ≤ 0 has no position: it becomes a gap, never a clamped or zeroed point. */
export function logSafe(value: number | null): number | null {
  return value !== null && Number.isFinite(value) && value > 0 ? value : null;
}

export function countNonPositive(chart: ChartSpec): number {
  let n = 0;
  for (const s of chart.series) for (const p of s.points) if (p.value !== null && p.value <= 0) n += 1;
  return n;
}

export type ChartRow = { step: number } & Record<string, number | [number, number] | null | undefined>;

export interface ChartLine {
  dataKey: string;
  /** The series this line draws, for the legend, tooltip and colour. */
  seriesName: string;
  seriesIndex: number;
  kind: 'raw' | 'smoothed';
  /** The line's own `[step, value]` pairs in step order, the rows that hold its key: drawn as one path. */
  points: [number, number][];
}

/** A shaded p10–p90 band behind one series: each row holding it has `[low, high]` under `dataKey`. */
export interface ChartBand {
  dataKey: string;
  seriesName: string;
  seriesIndex: number;
}

export interface ChartData {
  rows: ChartRow[];
  lines: ChartLine[];
  bands: ChartBand[];
}

/**
 * Rows for a recharts chart: one row per step present in any series. A step that a series did not sample
 * is simply absent from its keys, and lines connect across it (val is often logged every N steps). A real
 * gap (non-finite value, or ≤ 0 on a log axis) must break the line instead, so each series is cut into
 * segments at its gaps and every segment gets its own key: connecting within a key never bridges a gap.
 */
export function buildChartData(chart: ChartSpec, options: { smoothing: number; logScale: boolean }): ChartData {
  const rowsByStep = new Map<number, ChartRow>();
  const lines: ChartLine[] = [];
  const bands: ChartBand[] = [];
  const row = (step: number): ChartRow => {
    let r = rowsByStep.get(step);
    if (!r) {
      r = { step };
      rowsByStep.set(step, r);
    }
    return r;
  };

  chart.series.forEach((series, seriesIndex) => {
    const smoothed = options.smoothing > 0 ? smoothEma(series.points, options.smoothing) : null;
    const kinds: { kind: 'raw' | 'smoothed'; values: (number | null)[] }[] = [
      { kind: 'raw', values: series.points.map((p) => p.value) },
    ];
    if (smoothed) kinds.push({ kind: 'smoothed', values: smoothed });
    for (const { kind, values } of kinds) {
      let segment = 0;
      let open = false;
      let current: ChartLine | null = null;
      series.points.forEach((point, i) => {
        const value = options.logScale ? logSafe(values[i]) : values[i];
        // The step keeps its row even when this value is a gap: the table view lists it as empty.
        const r = row(point.step);
        if (value === null) {
          if (open) segment += 1;
          open = false;
          return;
        }
        const dataKey = `${kind === 'raw' ? 'r' : 's'}${seriesIndex}_${segment}`;
        if (!open) {
          current = { dataKey, seriesName: series.name, seriesIndex, kind, points: [] };
          lines.push(current);
        }
        open = true;
        r[dataKey] = value;
        current!.points.push([point.step, value]);
      });
    }
    // A band cannot be drawn on a log axis where its low end is ≤ 0; it is left out there rather than clipped.
    const band = series.band?.filter((b) => !options.logScale || b.low > 0);
    // One step is no area (recharts would draw it as stray dots); the line's own point stands alone.
    if (band && band.length >= 2) {
      const dataKey = `b${seriesIndex}`;
      bands.push({ dataKey, seriesName: series.name, seriesIndex });
      for (const b of band) row(b.step)[dataKey] = [b.low, b.high];
    }
  });

  const rows = [...rowsByStep.values()].sort((a, b) => a.step - b.step);
  return { rows, lines, bands };
}

/** The band of each series at one row, for tooltips and the table view. */
export function bandsAtRow(rowValue: ChartRow, bands: readonly ChartBand[]) {
  const out = new Map<number, [number, number]>();
  for (const band of bands) {
    const v = rowValue[band.dataKey];
    if (Array.isArray(v)) out.set(band.seriesIndex, v);
  }
  return out;
}

/**
 * For each series with no value at `step` whose line passes over it (a point of the same line before and after:
 * runs compared side by side log, or are downsampled, at steps of their own), its last point before `step`: what
 * the tooltip shows instead of nothing, with that point's step. A gap in a series (a segment ends) passes over
 * nothing.
 */
export function valuesBefore(
  step: number,
  lines: readonly ChartLine[],
  kind: 'raw' | 'smoothed',
  have: ReadonlyMap<number, number>,
): Map<number, { step: number; value: number }> {
  const out = new Map<number, { step: number; value: number }>();
  for (const line of lines) {
    if (line.kind !== kind || have.has(line.seriesIndex)) continue;
    const pts = line.points;
    if (pts.length < 2 || !(pts[0][0] < step && pts[pts.length - 1][0] > step)) continue;
    // The last point before `step` (points are in step order).
    let lo = 0;
    let hi = pts.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (pts[mid][0] < step) lo = mid;
      else hi = mid;
    }
    out.set(line.seriesIndex, { step: pts[lo][0], value: pts[lo][1] });
  }
  return out;
}

/** The value of each series at one row, for tooltips and the table view: segments folded back together. */
export function valuesAtRow(rowValue: ChartRow, lines: readonly ChartLine[], kind: 'raw' | 'smoothed') {
  const out = new Map<number, number>();
  for (const line of lines) {
    if (line.kind !== kind) continue;
    const v = rowValue[line.dataKey];
    if (typeof v === 'number') out.set(line.seriesIndex, v);
  }
  return out;
}
