import { describe, expect, it } from 'vitest';
import { smoothEma } from './ema-smoothing';

const series = (values: (number | null)[]) => values.map((value, step) => ({ step, value }));

describe('smoothEma', () => {
  it('returns the raw values with weight 0', () => {
    expect(smoothEma(series([1, 5, 2]), 0)).toEqual([1, 5, 2]);
  });

  it('is debiased: the first smoothed value equals the first raw value', () => {
    const out = smoothEma(series([10, 0]), 0.6);
    expect(out[0]).toBeCloseTo(10);
    // last = 0.6*4 + 0.4*0 = 2.4 (after 4 = 0.4*10); debias 1 - 0.36 = 0.64 → 3.75
    expect(out[1]).toBeCloseTo(3.75);
  });

  it('keeps a constant series exactly constant', () => {
    expect(smoothEma(series([0.3, 0.3, 0.3, 0.3]), 0.9)).toEqual([0.3, 0.3, 0.3, 0.3]);
  });

  it('preserves gaps and does not let them pull the average towards zero', () => {
    const out = smoothEma(series([2, null, 2, 4]), 0.5);
    expect(out[1]).toBeNull();
    expect(out[2]).toBeCloseTo(2);
    expect(out[3]).toBeGreaterThan(2);
    expect(out[3]).toBeLessThan(4);
  });

  it('clamps weights outside [0, 0.999] and treats NaN as no smoothing', () => {
    expect(smoothEma(series([1, 3]), Number.NaN)).toEqual([1, 3]);
    const clamped = smoothEma(series([1, 3]), 5);
    expect(clamped[1]).toBeGreaterThan(1);
    expect(clamped[1]).toBeLessThan(3);
    expect(smoothEma([], 0.5)).toEqual([]);
  });
});
