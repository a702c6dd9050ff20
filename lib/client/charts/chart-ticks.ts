import type { ChartRow } from './chart-series';

// Apart from chart-series.ts: only the lazily loaded chart (components/charts/metric-chart.tsx) needs these, and
// chart-series.ts is in the model page's first load, which sits at its size budget.

/** The lowest and highest number a chart's rows hold (lines and bands), or null when they hold none. */
export function rowsExtent(rows: readonly ChartRow[]): [number, number] | null {
  let min = Infinity;
  let max = -Infinity;
  const see = (v: unknown) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return;
    if (v < min) min = v;
    if (v > max) max = v;
  };
  for (const row of rows)
    for (const [key, v] of Object.entries(row)) {
      if (key === 'step') continue;
      if (Array.isArray(v)) v.forEach(see);
      else see(v);
    }
  return min <= max ? [min, max] : null;
}

/**
 * Labels with `plain` significant digits, or in exponent form (below 1e-3 and from 1e5) with `decimals` after the
 * point: the plain form keeps four digits at least, the exponent form only what tells the ticks apart ("2e-6").
 */
function labelWith(plain: number, decimals: number): (value: number) => string {
  return (value) => {
    const abs = Math.abs(value);
    if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(Math.min(14, Math.max(0, decimals)));
    return value.toLocaleString('en', { maximumSignificantDigits: plain });
  };
}

/** Significant digits from the leading one of `magnitude` down to `step`'s, plus one for the step's own. */
function digitsFor(magnitude: number, step: number): number {
  return step > 0 && magnitude > 0 ? Math.ceil(Math.log10(magnitude / step)) + 1 : 1;
}

/**
 * Y-axis tick labels for values spanning `extent`: as many significant digits as it takes for the few ticks across
 * the span to read differently (4 at least). A metric that barely moves, such as an RL importance ratio of
 * 1 ± 1e-7, otherwise labelled every tick "1". Used where the chart picks its own ticks (a log scale).
 */
export function yTickFormatter(extent: [number, number] | null): (value: number) => string {
  let needed = 1;
  if (extent) {
    const [min, max] = extent;
    needed = digitsFor(Math.max(Math.abs(min), Math.abs(max)), (max - min) / 4);
  }
  return labelWith(Math.min(15, Math.max(4, needed)), Math.max(1, needed - 1));
}

/**
 * A linear y axis of its own: "nice" ticks (1, 2, 2.5 or 5 × 10^k apart) covering the data, and labels with as many
 * significant digits as it takes for every tick to read differently. With recharts' own ticks the labels were sized
 * from the data's extent, not from the ticks it drew, so a metric that barely moved, or did not move at all, read
 * "10.72, 10.72" or "0.002, 0.002". A flat series gets a small span around its value.
 */
export function linearYAxis(
  extent: [number, number] | null,
  count = 5,
): { ticks: number[]; domain: [number, number]; format: (value: number) => string } | null {
  if (!extent) return null;
  let [min, max] = extent;
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.01;
    min -= pad;
    max += pad;
  }
  const raw = (max - min) / (count - 1);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * magnitude;
  const first = Math.floor(min / step);
  const last = Math.ceil(max / step);
  // From integer multiples, rounded to 12 significant digits: adding steps would accumulate 0.30000000000000004.
  const ticks = Array.from({ length: last - first + 1 }, (_, i) => Number(((first + i) * step).toPrecision(12)));
  const largest = Math.max(Math.abs(ticks[0]), Math.abs(ticks[ticks.length - 1]));
  // The fewest digits that tell every tick apart, four at least in the plain form.
  let plain = Math.min(15, Math.max(4, digitsFor(largest, step)));
  let decimals = 0;
  let format = labelWith(plain, decimals);
  while (decimals < 14 && new Set(ticks.map(format)).size < ticks.length) {
    plain = Math.min(15, plain + 1);
    format = labelWith(plain, ++decimals);
  }
  return { ticks, domain: [ticks[0], ticks[ticks.length - 1]], format };
}
