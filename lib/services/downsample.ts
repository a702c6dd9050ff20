/**
 * Reduces a step-ordered series to at most `maxPoints` points for charting. Each bucket keeps its min and
 * max (so spikes survive), the first point and the very last point are always kept (ARCHITECTURE §9).
 */
export function downsampleSeries(points: [number, number][], maxPoints: number): [number, number][] {
  if (points.length <= maxPoints) return points;
  const budget = Math.max(4, maxPoints);
  const bucketCount = Math.floor((budget - 2) / 2);
  const inner = points.slice(1, -1);
  const size = inner.length / bucketCount;
  const out: [number, number][] = [points[0]];
  for (let b = 0; b < bucketCount; b++) {
    const start = Math.floor(b * size);
    const end = Math.min(inner.length, Math.floor((b + 1) * size));
    if (end <= start) continue;
    let lo = start;
    let hi = start;
    for (let i = start + 1; i < end; i++) {
      if (inner[i][1] < inner[lo][1]) lo = i;
      if (inner[i][1] > inner[hi][1]) hi = i;
    }
    // Keep step order inside the bucket.
    if (lo === hi) out.push(inner[lo]);
    else if (lo < hi) out.push(inner[lo], inner[hi]);
    else out.push(inner[hi], inner[lo]);
  }
  out.push(points[points.length - 1]);
  return out;
}
