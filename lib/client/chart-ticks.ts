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
 * Y-axis tick labels for values spanning `extent`: as many significant digits as it takes for the few ticks across
 * the span to read differently (4 at least). A metric that barely moves, such as an RL importance ratio of
 * 1 ± 1e-7, otherwise labelled every tick "1". Exponents below 1e-3 and from 1e5, as before.
 */
export function yTickFormatter(extent: [number, number] | null): (value: number) => string {
  let needed = 1;
  if (extent) {
    const [min, max] = extent;
    const step = (max - min) / 4;
    const magnitude = Math.max(Math.abs(min), Math.abs(max));
    // Digits from the leading one down to the tick step's, plus one for the step's own.
    if (step > 0 && magnitude > 0) needed = Math.ceil(Math.log10(magnitude / step)) + 1;
  }
  const digits = Math.min(15, Math.max(4, needed));
  return (value) => {
    const abs = Math.abs(value);
    if (abs !== 0 && (abs < 1e-3 || abs >= 1e5)) return value.toExponential(Math.min(14, Math.max(1, needed - 1)));
    return value.toLocaleString('en', { maximumSignificantDigits: digits });
  };
}
