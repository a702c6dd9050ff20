import { describe, expect, it } from 'vitest';
import { groupSeriesIntoCharts } from './chart-series';
import { chartSection, constantValue, effectiveSmoothing, sectionCharts } from './chart-sections';

const s = (name: string, values: number[]) => ({
  name,
  total_points: values.length,
  points: values.map((v, i) => [i + 1, v] as [number, number]),
});

describe('chart sections', () => {
  it('sorts metrics into Reward, Policy health and Data', () => {
    expect(chartSection('reward')).toBe('reward');
    expect(chartSection('correct')).toBe('reward');
    expect(chartSection('entropy')).toBe('policy');
    expect(chartSection('zero_advantage_share')).toBe('policy');
    expect(chartSection('num_groups_trainable')).toBe('data');
  });

  it('folds constant series into one row and keeps varying ones as charts', () => {
    const charts = groupSeriesIntoCharts([
      s('train/reward', [0, 1, 2]),
      s('train/learning_rate', [1e-5, 1e-5, 1e-5]),
      s('train/num_groups_submitted', [8, 8]),
    ]);
    expect(constantValue(charts.find((c) => c.metric === 'learning_rate')!)).toBe(1e-5);
    expect(constantValue(charts.find((c) => c.metric === 'reward')!)).toBeNull();
    // A lone reward point stays a chart: it is what opens the trajectories.
    expect(sectionCharts(groupSeriesIntoCharts([s('train/reward', [1])]))[0].charts).toHaveLength(1);
    const sections = sectionCharts(charts);
    expect(sections.map((x) => [x.id, x.charts.map((c) => c.metric), x.constants.map((c) => c.metric)])).toEqual([
      ['reward', ['reward'], []],
      ['policy', [], ['learning_rate']],
      ['data', [], ['num_groups_submitted']],
    ]);
  });

  it('turns smoothing off under 20 points', () => {
    const [short] = groupSeriesIntoCharts([s('train/reward', [1, 2, 3])]);
    const [long] = groupSeriesIntoCharts([
      s(
        'train/reward',
        Array.from({ length: 20 }, (_, i) => i),
      ),
    ]);
    expect(effectiveSmoothing(short, 0.6)).toBe(0);
    expect(effectiveSmoothing(long, 0.6)).toBe(0.6);
  });
});
