import { describe, expect, it } from 'vitest';
import { linearYAxis, rowsExtent, yTickFormatter } from './chart-ticks';

describe('y-axis ticks', () => {
  it('give a metric that barely moves distinct labels, and keep four digits otherwise', () => {
    // An RL importance ratio: 1 ± 1e-7 (the chart labelled each tick "1").
    const ratio = yTickFormatter([0.99999991, 1.00000009]);
    const ticks = [0.99999991, 0.99999996, 1.00000001, 1.00000006].map(ratio);
    expect(new Set(ticks).size).toBe(4);
    expect(ticks[0]).toBe('0.99999991');
    const loss = yTickFormatter([0, 100]);
    expect([0, 25, 12.3456, 1234.5].map(loss)).toEqual(['0', '25', '12.35', '1,235']);
    // Small magnitudes keep their digits (toLocaleString alone rounds 0.0012345 to "0.001").
    expect(yTickFormatter([0.001, 0.002])(0.0012345)).toBe('0.001235');
    expect(yTickFormatter([-7e-9, 7e-9])(3.5e-9)).toBe('3.5e-9');
    expect(yTickFormatter([1e-6, 1.0001e-6])(1.00005e-6)).toBe('1.00005e-6');
    expect(yTickFormatter(null)(0.5)).toBe('0.5');
    expect(yTickFormatter([3, 3])(3)).toBe('3');
  });

  it('finds the extent of lines and bands, ignoring steps and gaps', () => {
    expect(
      rowsExtent([
        { step: 100, a: 0.5, b: null },
        { step: 200, a: -2, band: [-3, 4] },
        { step: 300, a: Number.NaN, b: undefined },
      ]),
    ).toEqual([-3, 4]);
    expect(rowsExtent([{ step: 1 }])).toBeNull();
  });

  it('a linear axis has nice ticks covering the data, every label distinct', () => {
    const labels = (extent: [number, number]) => {
      const axis = linearYAxis(extent)!;
      expect(axis.domain[0]).toBeLessThanOrEqual(extent[0]);
      expect(axis.domain[1]).toBeGreaterThanOrEqual(extent[1]);
      const out = axis.ticks.map(axis.format);
      expect(new Set(out).size, out.join(', ')).toBe(out.length);
      return out;
    };
    // Observed: "10.72, 10.72" on a job's loss axis, "0.002, 0.002" on a val/loss axis.
    expect(labels([10.7181, 10.7236])).toEqual(['10.718', '10.72', '10.722', '10.724']);
    expect(labels([0.0018, 0.0023])).toEqual(['0.0018', '0.002', '0.0022', '0.0024']);
    // A flat series (a single point) gets a small span around its value, not one repeated label.
    expect(labels([10.72, 10.72])).toEqual(['10.6', '10.7', '10.8', '10.9']);
    expect(labels([0, 0])).toEqual(['-1', '-0.5', '0', '0.5', '1']);
    expect(labels([0, 100])).toEqual(['0', '25', '50', '75', '100']);
    expect(labels([0.99999991, 1.00000009])).toEqual(['0.9999999', '0.99999995', '1', '1.00000005', '1.0000001']);
    expect(labels([-3e-6, 4e-6])).toEqual(['-4e-6', '-2e-6', '0', '2e-6', '4e-6']);
    expect(labels([0.6357, 0.7939])).toEqual(['0.6', '0.65', '0.7', '0.75', '0.8']);
    expect(linearYAxis(null)).toBeNull();
  });
});
