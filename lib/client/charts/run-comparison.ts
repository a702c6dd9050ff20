import type { ChartSpec } from './chart-series';
import type { SeriesPoint } from './ema-smoothing';

/** The x-axes run comparison offers. */
export const COMPARE_AXES = ['gradient_step', 'job_step', 'wall_clock', 'tokens'] as const;
export type CompareAxis = (typeof COMPARE_AXES)[number];

export const AXIS_LABELS: Record<CompareAxis, string> = {
  gradient_step: 'Gradient step',
  job_step: 'Job step',
  wall_clock: 'Time since start',
  tokens: 'Tokens trained',
};

/** What of one run's history the axes need (history?axis=gradient_step). */
export interface CurveAxes {
  /** `[x, recorded at (Unix ms), tokens through x]`, in x order. */
  marks: readonly (readonly [number, number, number])[];
  /** Each job's stretch of the curve, in x order. */
  segments: readonly { first_x: number; last_x: number }[];
}

/**
 * A value at x by straight lines between the knots `[x, v]` (x ascending), or undefined outside them. Time and
 * tokens only grow with x, so between two knots a point lies within their span.
 */
function interpolator(knots: readonly (readonly [number, number])[]) {
  let i = 0;
  // Points come in x order: the knot index only moves forward (a binary search per point is not needed).
  return (x: number): number | undefined => {
    if (knots.length === 0 || x < knots[0][0] || x > knots[knots.length - 1][0]) return undefined;
    if (i > 0 && knots[i - 1][0] > x) i = 0;
    while (i < knots.length - 1 && knots[i + 1][0] < x) i++;
    const [x0, v0] = knots[i];
    if (x0 === x || i === knots.length - 1) return v0;
    const [x1, v1] = knots[i + 1];
    return v0 + ((v1 - v0) * (x - x0)) / (x1 - x0);
  };
}

/**
 * One run's series on the chosen x-axis. Gradient step: as stored. Job step: the steps of the run's latest job only,
 * numbered from 1 (a model trained by several jobs would otherwise fold back on itself); a curve without jobs (the
 * Tinker API's) counts as one. Wall clock: seconds since the curve's first point. Tokens: trainable tokens trained
 * through the point. A point the run has no time or tokens for is left out, never guessed.
 */
export function pointsOnAxis(points: readonly SeriesPoint[], axis: CompareAxis, axes: CurveAxes): SeriesPoint[] {
  switch (axis) {
    case 'gradient_step':
      return points.slice();
    case 'job_step': {
      const last = axes.segments.at(-1);
      if (!last) return points.slice();
      return points
        .filter((p) => p.step >= last.first_x && p.step <= last.last_x)
        .map((p) => ({ step: p.step - last.first_x + 1, value: p.value }));
    }
    case 'wall_clock':
    case 'tokens': {
      const start = axes.marks[0]?.[1] ?? 0;
      const at = interpolator(
        axes.marks.map(([x, t, tokens]) => [x, axis === 'tokens' ? tokens : (t - start) / 1000] as const),
      );
      const out: SeriesPoint[] = [];
      for (const p of points) {
        const x = at(p.step);
        if (x === undefined) continue;
        // Points of one batch share a time: the later ones replace the earlier at that x (one value per x and line).
        if (out.length && out[out.length - 1].step === x) out[out.length - 1] = { step: x, value: p.value };
        else out.push({ step: x, value: p.value });
      }
      return out;
    }
  }
}

/** Why a run has nothing on an axis, or null when it has its points there. */
export function axisGap(axis: CompareAxis, axes: CurveAxes): string | null {
  if (axis === 'wall_clock' && axes.marks.length === 0) return 'no recorded times';
  if (axis === 'tokens' && (axes.marks.length === 0 || axes.marks[axes.marks.length - 1][2] === 0))
    return 'no num_trainable_tokens logged';
  return null;
}

export interface RunCurve {
  label: string;
  series: readonly { name: string; total_points: number; points: readonly (readonly [number, number])[] }[];
  axes: CurveAxes;
}

// The curve's usual keys first, as on the model page; the rest alphabetically.
const ORDER = ['loss', 'val/loss', 'grad_norm', 'learning_rate'];
const rank = (name: string) => (ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length);

/**
 * One chart per metric key of any run, each with a line per run in the same order (so a run keeps its colour on
 * every chart, and a run without that key is listed as having no value rather than shifting the others' colours).
 */
export function comparisonCharts(runs: readonly RunCurve[], axis: CompareAxis): ChartSpec[] {
  const names = [...new Set(runs.flatMap((r) => r.series.map((s) => s.name)))].sort(
    (a, b) => rank(a) - rank(b) || a.localeCompare(b),
  );
  return names.map((metric) => ({
    metric,
    series: runs.map((run) => {
      const s = run.series.find((x) => x.name === metric);
      const points = s
        ? pointsOnAxis(
            s.points.map(([step, value]) => ({ step, value: Number.isFinite(value) ? value : null })),
            axis,
            run.axes,
          )
        : [];
      return { name: run.label, split: '', totalPoints: s?.total_points ?? 0, points };
    }),
  }));
}

export type ConfigValue = string | number | boolean | null;

/** Keys the run table lists first, in this order: what people change between runs. */
const CONFIG_ORDER = [
  'base_model',
  'kind',
  'learning_rate',
  'batch_size',
  'epochs',
  'lora_rank',
  'lora_alpha',
  'lora_dropout',
  'lora_target_modules',
];

export interface ConfigRow {
  key: string;
  /** Each run's value, in run order; undefined where the run's config lacks the key. */
  values: (ConfigValue | undefined)[];
  differs: boolean;
}

/**
 * The run table's configuration rows: every key of any run, the usual ones first; `differs` where not every run has
 * the same value (a key some runs lack differs). `onlyDiffering` keeps just those.
 */
export function configRows(configs: readonly Record<string, ConfigValue>[], onlyDiffering = false): ConfigRow[] {
  const keys = [...new Set(configs.flatMap((c) => Object.keys(c)))].sort((a, b) => {
    const ra = CONFIG_ORDER.indexOf(a);
    const rb = CONFIG_ORDER.indexOf(b);
    return (ra === -1 ? CONFIG_ORDER.length : ra) - (rb === -1 ? CONFIG_ORDER.length : rb) || a.localeCompare(b);
  });
  const rows = keys.map((key) => {
    const values = configs.map((c) => (Object.hasOwn(c, key) ? c[key] : undefined));
    // Absent and null are different answers: "not set" against "set to nothing".
    const text = (v: ConfigValue | undefined) => (v === undefined ? '\u0000absent' : JSON.stringify(v));
    return { key, values, differs: values.some((v) => text(v) !== text(values[0])) };
  });
  return onlyDiffering ? rows.filter((r) => r.differs) : rows;
}

/** An x-axis tick or tooltip label for the chosen axis. */
export function formatAxisValue(axis: CompareAxis, value: number): string {
  if (axis === 'wall_clock') {
    const s = Math.round(value);
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? ` ${s % 60}s` : ''}`;
    return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)}m` : ''}`;
  }
  if (axis === 'tokens') {
    if (value >= 1e9) return `${+(value / 1e9).toFixed(2)}B`;
    if (value >= 1e6) return `${+(value / 1e6).toFixed(2)}M`;
    if (value >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
    return String(Math.round(value));
  }
  return Math.round(value).toLocaleString('en');
}
