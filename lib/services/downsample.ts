import 'server-only';
/** A point as [step, value]. */
export type Point = [number, number];

/**
 * What is known of a run of consecutive points: its first, lowest, highest and last point. A stored rollup
 * bucket is one; a single point is one with all four equal.
 */
export interface BucketSummary {
  first: Point;
  min: Point;
  max: Point;
  last: Point;
}

export const pointSummary = (p: Point): BucketSummary => ({ first: p, min: p, max: p, last: p });

/** Buckets for a budget of `maxPoints`: two points each (lowest and highest), plus the first and the last. */
export const downsampleBucketCount = (maxPoints: number) => Math.max(1, Math.floor((Math.max(4, maxPoints) - 2) / 2));

/**
 * Reduces step-ordered summaries to at most `maxPoints` points for charting (docs/architecture.md §7 item 9): the step range
 * is cut into (maxPoints − 2) / 2 equal buckets and each keeps its lowest and highest point, so spikes
 * survive; the very first and last points are always kept. Buckets are by step rather than by index so that
 * a series with gaps is not stretched, and so that finer rollups merge into coarser buckets directly.
 */
export function downsampleSummaries(items: readonly BucketSummary[], maxPoints: number): Point[] {
  if (items.length === 0) return [];
  const first = items[0].first;
  const last = items[items.length - 1].last;
  const bucketCount = downsampleBucketCount(maxPoints);
  const span = last[0] - first[0] + 1;
  const lows: (Point | undefined)[] = new Array(bucketCount);
  const highs: (Point | undefined)[] = new Array(bucketCount);
  const bucketOf = (step: number) => Math.min(bucketCount - 1, Math.floor(((step - first[0]) * bucketCount) / span));
  for (const item of items) {
    const lo = bucketOf(item.min[0]);
    const cur = lows[lo];
    // Ties keep the earlier step, matching how the rollups choose.
    if (!cur || item.min[1] < cur[1] || (item.min[1] === cur[1] && item.min[0] < cur[0])) lows[lo] = item.min;
    const hi = bucketOf(item.max[0]);
    const top = highs[hi];
    if (!top || item.max[1] > top[1] || (item.max[1] === top[1] && item.max[0] < top[0])) highs[hi] = item.max;
  }
  const out: Point[] = [first];
  const push = (p: Point | undefined) => {
    if (p && p[0] > out[out.length - 1][0] && p[0] < last[0]) out.push(p);
  };
  for (let b = 0; b < bucketCount; b++) {
    const low = lows[b];
    const high = highs[b];
    if (low && high && high[0] < low[0]) {
      push(high);
      push(low);
    } else {
      push(low);
      push(high);
    }
  }
  if (last[0] !== first[0]) out.push(last);
  return out;
}
