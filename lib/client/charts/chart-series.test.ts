import { describe, expect, it } from 'vitest';
import {
  bandsAtRow,
  buildChartData,
  countNonPositive,
  groupSeriesIntoCharts,
  logSafe,
  parseSeriesName,
  valuesAtRow,
  valuesBefore,
} from './chart-series';

describe('parseSeriesName', () => {
  it('splits on the first slash only', () => {
    expect(parseSeriesName('train/reward')).toEqual({ split: 'train', metric: 'reward' });
    expect(parseSeriesName('val/judge/score')).toEqual({ split: 'val', metric: 'judge/score' });
    expect(parseSeriesName('loss')).toEqual({ split: '', metric: 'loss' });
    expect(parseSeriesName('/odd')).toEqual({ split: '', metric: '/odd' });
  });
});

describe('groupSeriesIntoCharts', () => {
  it('puts every split of a metric on one chart, reward first, train before val', () => {
    const charts = groupSeriesIntoCharts([
      { name: 'val/reward', total_points: 1, points: [[0, 1]] },
      { name: 'train/exception_rate', total_points: 1, points: [[0, 0]] },
      { name: 'train/reward', total_points: 1, points: [[0, 2]] },
      { name: 'eval/reward', total_points: 1, points: [[0, 3]] },
    ]);
    expect(charts.map((c) => c.metric)).toEqual(['reward', 'exception_rate']);
    expect(charts[0].series.map((s) => s.name)).toEqual(['train/reward', 'val/reward', 'eval/reward']);
  });
});

describe('log scale', () => {
  it('turns non-positive and non-finite values into gaps', () => {
    expect(logSafe(0)).toBeNull();
    expect(logSafe(-1)).toBeNull();
    expect(logSafe(Number.NaN)).toBeNull();
    expect(logSafe(null)).toBeNull();
    expect(logSafe(0.5)).toBe(0.5);
  });

  it('counts the values a log axis hides', () => {
    const [chart] = groupSeriesIntoCharts([
      {
        name: 'train/loss',
        total_points: 3,
        points: [
          [0, 1],
          [1, 0],
          [2, -2],
        ],
      },
    ]);
    expect(countNonPositive(chart)).toBe(2);
  });
});

describe('buildChartData', () => {
  const [chart] = groupSeriesIntoCharts([
    {
      name: 'train/loss',
      total_points: 4,
      points: [
        [0, 2],
        [1, 1],
        [2, -1],
        [3, 0.5],
      ],
    },
    {
      name: 'val/loss',
      total_points: 2,
      points: [
        [0, 3],
        [3, 1],
      ],
    },
  ]);

  it('makes one row per step of any series; unsampled steps are absent, not zero', () => {
    const { rows, lines } = buildChartData(chart, { smoothing: 0, logScale: false });
    expect(rows.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    expect(lines.filter((l) => l.kind === 'smoothed')).toEqual([]);
    const valKey = lines.find((l) => l.seriesName === 'val/loss')!.dataKey;
    expect(rows[1][valKey]).toBeUndefined();
    expect(rows[3][valKey]).toBe(1);
  });

  it("gives a series with no value at a step its line's last point before it, where the line passes over it", () => {
    const { rows, lines } = buildChartData(chart, { smoothing: 0, logScale: false });
    // val/loss has points at 0 and 3 only: steps 1 and 2 show its value at 0.
    const have = valuesAtRow(rows[1], lines, 'raw');
    expect([...have.keys()]).toEqual([0]);
    expect(valuesBefore(1, lines, 'raw', have)).toEqual(new Map([[1, { step: 0, value: 3 }]]));
    expect(valuesBefore(2, lines, 'raw', valuesAtRow(rows[2], lines, 'raw')).get(1)).toEqual({ step: 0, value: 3 });
    // Before a series' first point, after its last, and across a gap in it: nothing.
    expect(valuesBefore(4, lines, 'raw', new Map()).size).toBe(0);
    const log = buildChartData(chart, { smoothing: 0, logScale: true });
    expect(valuesBefore(2, log.lines, 'raw', valuesAtRow(log.rows[2], log.lines, 'raw')).has(0)).toBe(false);
  });

  it('breaks a line at a log-scale gap by starting a new segment key', () => {
    const { rows, lines } = buildChartData(chart, { smoothing: 0, logScale: true });
    const train = lines.filter((l) => l.seriesName === 'train/loss');
    expect(train.map((l) => l.dataKey)).toEqual(['r0_0', 'r0_1']);
    expect(rows[2].r0_0).toBeUndefined();
    expect(rows[2].r0_1).toBeUndefined();
    expect(rows[3].r0_1).toBe(0.5);
  });

  it("gives each line its own points, the ones its path is drawn from: a segment's, across unsampled steps", () => {
    const { rows, lines } = buildChartData(chart, { smoothing: 0, logScale: true });
    expect(lines.map((l) => [l.dataKey, l.points])).toEqual([
      [
        'r0_0',
        [
          [0, 2],
          [1, 1],
        ],
      ],
      ['r0_1', [[3, 0.5]]],
      [
        'r1_0',
        [
          [0, 3],
          [3, 1],
        ],
      ],
    ]);
    // The same values as the rows hold under the line's key.
    for (const line of lines)
      expect(line.points).toEqual(rows.filter((r) => line.dataKey in r).map((r) => [r.step, r[line.dataKey]]));
  });

  it('adds smoothed lines beside the raw ones', () => {
    const { lines } = buildChartData(chart, { smoothing: 0.6, logScale: false });
    expect(lines.filter((l) => l.kind === 'smoothed').map((l) => l.seriesName)).toEqual(['train/loss', 'val/loss']);
  });
});

describe('reward bands', () => {
  it('puts [p10, p90] on the rows of the band steps under one key per series, and leaves it off a log axis at ≤ 0', () => {
    const [chart] = groupSeriesIntoCharts(
      [
        {
          name: 'train/reward',
          total_points: 2,
          points: [
            [0, 0.5],
            [2, 0.6],
          ],
        },
        { name: 'val/reward', total_points: 1, points: [[2, 0.7]] },
      ],
      [
        {
          name: 'train/reward',
          points: [
            [0, 0, 1],
            [1, 0.2, 0.8],
            [2, 0.4, 0.9],
          ],
        },
      ],
    );
    expect(chart.series[0].band).toEqual([
      { step: 0, low: 0, high: 1 },
      { step: 1, low: 0.2, high: 0.8 },
      { step: 2, low: 0.4, high: 0.9 },
    ]);
    expect(chart.series[1].band).toBeUndefined();
    const { rows, bands } = buildChartData(chart, { smoothing: 0, logScale: false });
    expect(bands).toEqual([{ dataKey: 'b0', seriesName: 'train/reward', seriesIndex: 0 }]);
    expect(rows.map((r) => [r.step, r.b0])).toEqual([
      [0, [0, 1]],
      [1, [0.2, 0.8]],
      [2, [0.4, 0.9]],
    ]);
    expect(bandsAtRow(rows[1], bands)).toEqual(new Map([[0, [0.2, 0.8]]]));
    const log = buildChartData(chart, { smoothing: 0, logScale: true });
    expect(log.rows.find((r) => r.step === 0)?.b0).toBeUndefined();
    expect(log.rows.find((r) => r.step === 1)?.b0).toEqual([0.2, 0.8]);
  });
});
