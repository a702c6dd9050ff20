import { describe, expect, it } from 'vitest';
import { downsampleSummaries, pointSummary, type BucketSummary, type Point } from './downsample';

const series = (n: number, f: (step: number) => number, start = 0): Point[] =>
  Array.from({ length: n }, (_, i) => [start + i, f(start + i)]);

describe('downsampleSummaries', () => {
  it('keeps the first and last point and every spike, within the point budget', () => {
    const points = series(10_000, (s) => Math.sin(s / 50));
    points[1234][1] = 9; // a spike up
    points[7777][1] = -9; // a spike down
    const out = downsampleSummaries(points.map(pointSummary), 100);
    expect(out.length).toBeLessThanOrEqual(100);
    expect(out.length).toBeGreaterThan(90);
    expect(out[0]).toEqual([0, points[0][1]]);
    expect(out.at(-1)).toEqual([9999, points[9999][1]]);
    expect(out).toContainEqual([1234, 9]);
    expect(out).toContainEqual([7777, -9]);
    // Strictly increasing steps, each a real point of the series.
    for (let i = 1; i < out.length; i++) expect(out[i][0]).toBeGreaterThan(out[i - 1][0]);
    for (const [step, value] of out) expect(points[step][1]).toBe(value);
  });

  it('gives the same answer from rollup buckets as from the points they summarise', () => {
    const points = series(4096, (s) => Math.cos(s / 17) * (1 + (s % 13)));
    const buckets: BucketSummary[] = [];
    for (let i = 0; i < points.length; i += 8) {
      const chunk = points.slice(i, i + 8);
      const min = chunk.reduce((a, b) => (b[1] < a[1] ? b : a));
      const max = chunk.reduce((a, b) => (b[1] > a[1] ? b : a));
      buckets.push({ first: chunk[0], min, max, last: chunk.at(-1)! });
    }
    // Targets 16× coarser than the rollups: every target bucket is a whole number of rollup buckets.
    const fromPoints = downsampleSummaries(points.map(pointSummary), 2 + 2 * (4096 / 128));
    const fromBuckets = downsampleSummaries(buckets, 2 + 2 * (4096 / 128));
    expect(fromBuckets).toEqual(fromPoints);
  });

  it('does not stretch a series with gaps: buckets are by step, not by index', () => {
    // 50 points at steps 0..49, then 50 points at 10_000..10_049.
    const points = [...series(50, () => 1), ...series(50, () => 2, 10_000)];
    const out = downsampleSummaries(points.map(pointSummary), 20);
    expect(out.length).toBeLessThanOrEqual(20);
    expect(out[0]).toEqual([0, 1]);
    expect(out.at(-1)).toEqual([10_049, 2]);
  });

  it('handles tiny inputs', () => {
    expect(downsampleSummaries([], 10)).toEqual([]);
    expect(downsampleSummaries([pointSummary([5, 1])], 10)).toEqual([[5, 1]]);
    expect(downsampleSummaries([pointSummary([5, 1]), pointSummary([6, 2])], 10)).toEqual([
      [5, 1],
      [6, 2],
    ]);
  });
});
