import { describe, expect, it } from 'vitest';
import {
  bestTie,
  checkpointMetricKeys,
  defaultBestMetric,
  metricDirection,
  selectBestCheckpoint,
} from './best-checkpoint';

const ck = (step: number, metrics: Record<string, number>) => ({ id: `id-${step}`, step, metrics });

describe('metricDirection', () => {
  it('treats losses and error rates as lower-is-better', () => {
    expect(metricDirection('val/reward')).toBe('max');
    expect(metricDirection('train/loss')).toBe('min');
    expect(metricDirection('train/exception_rate')).toBe('min');
    expect(metricDirection('train/reward_std_dev')).toBe('max');
    expect(metricDirection('val/accuracy')).toBe('max');
  });
});

describe('selectBestCheckpoint', () => {
  const list = [
    ck(1, { 'val/reward': 0.2, 'train/loss': 3 }),
    ck(2, { 'train/loss': 1 }),
    ck(3, { 'val/reward': 0.7 }),
    ck(4, { 'val/reward': 0.7 }),
  ];

  it('picks the highest value, the later step on a tie, ignoring checkpoints without the metric', () => {
    expect(selectBestCheckpoint(list, 'val/reward')?.step).toBe(4);
  });

  it('picks the lowest value for lower-is-better metrics or when asked', () => {
    expect(selectBestCheckpoint(list, 'train/loss')?.step).toBe(2);
    expect(selectBestCheckpoint(list, 'val/reward', 'min')?.step).toBe(1);
  });

  it('returns null when no checkpoint has the metric', () => {
    expect(selectBestCheckpoint(list, 'val/nothing')).toBeNull();
    expect(selectBestCheckpoint([], 'val/reward')).toBeNull();
    expect(selectBestCheckpoint([ck(1, { x: Number.NaN })], 'x')).toBeNull();
  });
});

describe('checkpointMetricKeys / defaultBestMetric', () => {
  it('orders val before train before the rest', () => {
    const keys = checkpointMetricKeys([ck(1, { b: 1, 'train/reward': 1 }), ck(2, { 'val/z': 1, 'val/reward': 2 })]);
    expect(keys).toEqual(['val/reward', 'val/z', 'train/reward', 'b']);
    expect(defaultBestMetric(keys)).toBe('val/reward');
    expect(defaultBestMetric(['train/loss', 'val/loss'])).toBe('val/loss');
    expect(defaultBestMetric(['train/reward', 'val/loss', 'val/reward'])).toBe('val/reward');
    expect(defaultBestMetric(['train/loss', 'val/accuracy'])).toBe('val/accuracy');
  });

  it('never defaults to a train metric: without a val metric there is no best', () => {
    expect(defaultBestMetric(['train/reward', 'x'])).toBeNull();
    expect(defaultBestMetric(['train/grad_norm', 'train/learning_rate', 'train/loss'])).toBeNull();
    expect(defaultBestMetric([])).toBeNull();
  });
});

describe('bestTie (issue 41: tied checkpoints are called tied)', () => {
  const c = (step: number, v?: number) => ({
    id: `c${step}`,
    step,
    metrics: (v === undefined ? {} : { 'val/reward': v }) as Record<string, number>,
  });
  it('calls every checkpoint scoring the same a tie, not "Best: the latest"', () => {
    const cps = [c(1, 1), c(2, 1), c(3)];
    const best = selectBestCheckpoint(cps, 'val/reward');
    expect(bestTie(cps, 'val/reward', best)).toEqual({ tied: 2, total: 2, allTied: true });
  });
  it('counts a partial tie at the top without calling the whole run tied', () => {
    const cps = [c(1, 0.5), c(2, 1), c(3, 1)];
    expect(bestTie(cps, 'val/reward', selectBestCheckpoint(cps, 'val/reward'))).toEqual({
      tied: 2,
      total: 3,
      allTied: false,
    });
    expect(bestTie([c(1, 1)], 'val/reward', c(1, 1)).allTied).toBe(false);
  });
});
