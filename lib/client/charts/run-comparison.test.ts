import { describe, expect, it } from 'vitest';
import {
  axisGap,
  comparisonCharts,
  configRows,
  formatAxisValue,
  pointsOnAxis,
  type ConfigValue,
} from './run-comparison';

const pts = (...xs: [number, number][]) => xs.map(([step, value]) => ({ step, value }));

describe('pointsOnAxis', () => {
  // Two jobs: x 1–3 and 4–6; a batch every two steps (x 1–2 at t0, 3–4 at t0+10 s, 5–6 at t0+30 s).
  const t0 = 1_700_000_000_000;
  const axes = {
    marks: [
      [1, t0, 10],
      [2, t0, 20],
      [3, t0 + 10_000, 30],
      [4, t0 + 10_000, 40],
      [5, t0 + 30_000, 50],
      [6, t0 + 30_000, 60],
    ] as [number, number, number][],
    segments: [
      { first_x: 1, last_x: 3 },
      { first_x: 4, last_x: 6 },
    ],
  };
  const series = pts([1, 5], [2, 4], [3, 3], [4, 2], [5, 1], [6, 0.5]);

  it('keeps gradient steps as they are', () => {
    expect(pointsOnAxis(series, 'gradient_step', axes)).toEqual(series);
  });

  it("numbers the latest job's steps from 1 and leaves the earlier jobs out", () => {
    expect(pointsOnAxis(series, 'job_step', axes)).toEqual(pts([1, 2], [2, 1], [3, 0.5]));
    // No jobs (a Tinker curve): the whole curve is the one job.
    expect(pointsOnAxis(series, 'job_step', { marks: [], segments: [] })).toEqual(series);
  });

  it('puts points at the seconds since the first; one batch shares a time, the later point wins', () => {
    expect(pointsOnAxis(series, 'wall_clock', axes)).toEqual(pts([0, 4], [10, 2], [30, 0.5]));
  });

  it('puts points at the tokens trained through them, interpolating between thinned marks', () => {
    const thinned = { marks: [axes.marks[0], axes.marks[5]], segments: axes.segments };
    expect(pointsOnAxis(series, 'tokens', thinned)).toEqual(
      pts([10, 5], [20, 4], [30, 3], [40, 2], [50, 1], [60, 0.5]),
    );
    // Beyond the marks (a point stored after the marks were read) nothing is guessed.
    expect(pointsOnAxis(pts([7, 1]), 'tokens', axes)).toEqual([]);
  });

  it('says why a run has no points on an axis', () => {
    expect(axisGap('wall_clock', { marks: [], segments: [] })).toBe('no recorded times');
    expect(axisGap('tokens', { marks: [[1, t0, 0]], segments: [] })).toBe('no num_trainable_tokens logged');
    expect(axisGap('tokens', axes)).toBeNull();
    expect(axisGap('gradient_step', { marks: [], segments: [] })).toBeNull();
  });
});

describe('comparisonCharts', () => {
  it('draws one chart per key with a line per run in run order, an empty line where a run lacks the key', () => {
    const axes = { marks: [], segments: [] };
    const charts = comparisonCharts(
      [
        { label: 'a', axes, series: [{ name: 'reward', total_points: 1, points: [[1, 0.5]] }] },
        {
          label: 'b',
          axes,
          series: [
            {
              name: 'loss',
              total_points: 2,
              points: [
                [1, 2],
                [2, NaN],
              ],
            },
            { name: 'reward', total_points: 1, points: [[1, 0.7]] },
          ],
        },
      ],
      'gradient_step',
    );
    expect(charts.map((c) => c.metric)).toEqual(['loss', 'reward']);
    expect(charts[0].series.map((s) => [s.name, s.points])).toEqual([
      ['a', []],
      ['b', pts([1, 2]).concat({ step: 2, value: null as never })],
    ]);
    expect(charts[1].series.map((s) => s.points[0].value)).toEqual([0.5, 0.7]);
  });
});

describe('configRows', () => {
  const runs: Record<string, ConfigValue>[] = [
    { base_model: 'm', kind: 'sft', learning_rate: 1e-5, batch_size: 2, lora_rank: 8, seed: 1 },
    { base_model: 'm', kind: 'sft', learning_rate: 2e-5, batch_size: 2, seed: 1 },
    { base_model: 'm', kind: 'sft', learning_rate: 1e-5, batch_size: 2, lora_rank: 8, seed: 1 },
  ];

  it('lists every key, the usual ones first, and marks those that differ (a missing key differs)', () => {
    const rows = configRows(runs);
    expect(rows.map((r) => [r.key, r.differs])).toEqual([
      ['base_model', false],
      ['kind', false],
      ['learning_rate', true],
      ['batch_size', false],
      ['lora_rank', true],
      ['seed', false],
    ]);
    expect(rows.find((r) => r.key === 'lora_rank')!.values).toEqual([8, undefined, 8]);
  });

  it('keeps only the differing keys when asked', () => {
    expect(configRows(runs, true).map((r) => r.key)).toEqual(['learning_rate', 'lora_rank']);
    // null is a value, distinct from absent.
    expect(configRows([{ a: null }, {}], true).map((r) => r.key)).toEqual(['a']);
    expect(configRows([{ a: null }, { a: null }], true)).toEqual([]);
  });
});

describe('formatAxisValue', () => {
  it('writes seconds, tokens and steps readably', () => {
    expect(formatAxisValue('wall_clock', 42.4)).toBe('42s');
    expect(formatAxisValue('wall_clock', 150)).toBe('2m 30s');
    expect(formatAxisValue('wall_clock', 7260)).toBe('2h 1m');
    expect(formatAxisValue('tokens', 1500)).toBe('1.5k');
    expect(formatAxisValue('tokens', 2_500_000)).toBe('2.5M');
    expect(formatAxisValue('gradient_step', 12345)).toBe('12,345');
  });
});
