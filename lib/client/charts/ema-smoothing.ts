/** One sample of a metric series; `null` is a gap (a value that cannot be drawn), never a zero. */
export interface SeriesPoint {
  step: number;
  value: number | null;
}

/** Smoothing weights at or above 1 would freeze the curve at its first value. */
export const MAX_SMOOTHING = 0.999;

/**
 * TensorBoard's debiased exponential moving average (tensorboard `vz_line_chart2/line-chart.ts`,
 * `resmoothDataset`): the plain EMA starts at 0 and so drags the first points towards zero; dividing by
 * `1 - weight^n` removes that start-up bias. Gaps stay gaps and do not advance the average, so the curve
 * resumes where it left off instead of treating a missing value as 0. A constant series stays constant
 * (debiasing makes that exact; without it floating-point drift would show a wobble).
 */
export function smoothEma(points: readonly SeriesPoint[], weight: number): (number | null)[] {
  const w = Math.min(Math.max(Number.isFinite(weight) ? weight : 0, 0), MAX_SMOOTHING);
  let last = 0;
  let count = 0;
  const finite = points.filter((p) => p.value !== null && Number.isFinite(p.value));
  const constant = finite.length > 0 && finite.every((p) => p.value === finite[0].value);
  return points.map(({ value }) => {
    if (value === null || !Number.isFinite(value)) return null;
    if (w === 0 || constant) return value;
    last = last * w + (1 - w) * value;
    count += 1;
    return last / (1 - w ** count);
  });
}
