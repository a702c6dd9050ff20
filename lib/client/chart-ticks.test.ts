import { describe, expect, it } from 'vitest';
import { rowsExtent, yTickFormatter } from './chart-ticks';

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
});
