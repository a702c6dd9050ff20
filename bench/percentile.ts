/** The p-th percentile (0–100) of `values`, nearest rank below; NaN when there are none. `values` is left as it is. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
