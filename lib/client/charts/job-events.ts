import type { ChartSeries, ChartSpec, HistorySeries } from './chart-series';

interface EventLike {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Charts of a job's gradient steps: one per numeric field of `gradient_step` events (loss first, then
 * grad_norm, learning_rate, the rest alphabetically), x = the step's position within the job, 1-based.
 * A step without a field, or with a non-finite value, is a gap in that chart, never a zero. `val/<k>` (an SFT
 * job's held-out examples, scored on each epoch's last step) is drawn as a val line over `<k>`'s chart, the two
 * splits on one axis; it holds points only where it was measured, so the line joins the epochs.
 */
export function gradientStepCharts(events: readonly EventLike[]): ChartSpec[] {
  const steps = events.filter((e) => e.type === 'gradient_step');
  const keys = new Set<string>();
  for (const e of steps) for (const [k, v] of Object.entries(e.data)) if (typeof v === 'number') keys.add(k);
  const series = (key: string, split: string, sparse: boolean): ChartSeries => {
    const points = steps.map((e, i) => {
      const v = e.data[key];
      return { step: i + 1, value: typeof v === 'number' && Number.isFinite(v) ? v : null };
    });
    const kept = sparse ? points.filter((p) => p.value !== null) : points;
    return { name: key, split, totalPoints: kept.length, points: kept };
  };
  return gradientStepLayout(keys).map(({ metric, train, val }) =>
    val
      ? { metric, series: [series(train, 'train', false), series(val, 'val', true)] }
      : { metric, series: [series(train, '', train.startsWith('val/'))] },
  );
}

/**
 * The model's training curve (history with axis=gradient_step: every job's gradient steps on one x-axis) as charts,
 * laid out as a job's own: loss first, `val/<k>` drawn over `<k>`.
 */
export function trainingCurveCharts(history: readonly HistorySeries[]): ChartSpec[] {
  const byName = new Map(history.map((s) => [s.name, s]));
  const series = (name: string, split: string): ChartSeries => {
    const s = byName.get(name)!;
    return {
      name,
      split,
      totalPoints: s.total_points,
      points: s.points.map(([step, value]) => ({ step, value: Number.isFinite(value) ? value : null })),
    };
  };
  return gradientStepLayout(new Set(byName.keys())).map(({ metric, train, val }) => ({
    metric,
    series: val ? [series(train, 'train'), series(val, 'val')] : [series(train, '')],
  }));
}

/** Which gradient-step keys get a chart, in reading order, and which `val/<k>` goes over which `<k>`. */
function gradientStepLayout(keys: ReadonlySet<string>): { metric: string; train: string; val?: string }[] {
  const overlaid = (k: string) => k.startsWith('val/') && keys.has(k.slice(4));
  const order = ['loss', 'grad_norm', 'learning_rate'];
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
  return [...keys]
    .filter((k) => !overlaid(k))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((k) => (keys.has(`val/${k}`) ? { metric: k, train: k, val: `val/${k}` } : { metric: k, train: k }));
}

/** A short, readable summary of an event's data for the events table. */
export function eventSummary(event: EventLike): string {
  const entries = Object.entries(event.data);
  if (entries.length === 0) return '';
  return entries
    .map(([k, v]) => `${k}=${typeof v === 'number' ? formatCompact(v) : typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('  ');
}

function formatCompact(v: number): string {
  if (Number.isInteger(v)) return String(v);
  const abs = Math.abs(v);
  return abs !== 0 && (abs < 1e-3 || abs >= 1e5) ? v.toExponential(3) : String(Number(v.toPrecision(5)));
}
