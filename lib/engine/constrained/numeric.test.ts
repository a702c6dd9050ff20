import { describe, expect, it } from 'vitest';
import { Generator } from '../random';
import { decimalAtLeast, decimalAtMost, integerRange } from './numeric';

const full = (source: string) => new RegExp(`^(?:${source})$`);

describe('integer ranges as regexes', () => {
  it('matches exactly the canonical integers in range (brute force)', () => {
    const bounds: Array<[number | null, number | null]> = [
      [0, 0],
      [-150, 150],
      [7, 1234],
      [-1000, -37],
      [99, null],
      [null, -5],
      [null, 42],
      [-3, null],
      [10, 9],
      [1, 1],
      [100, 999],
      [101, 1099],
    ];
    for (const [lo, hi] of bounds) {
      const src = integerRange(lo === null ? null : BigInt(lo), hi === null ? null : BigInt(hi));
      if (lo !== null && hi !== null && lo > hi) {
        expect(src).toBeNull();
        continue;
      }
      const re = full(src as string);
      for (let x = -2100; x <= 2100; x++)
        expect([lo, hi, x, re.test(String(x))]).toEqual([
          lo,
          hi,
          x,
          (lo === null || x >= lo) && (hi === null || x <= hi),
        ]);
      expect(re.test('-0')).toBe(false);
      expect(re.test('007')).toBe(false);
    }
  });

  it('handles bounds beyond 2^53 exactly', () => {
    const re = full(integerRange(-(2n ** 63n), 2n ** 63n - 1n) as string);
    expect(re.test('9223372036854775807')).toBe(true);
    expect(re.test('9223372036854775808')).toBe(false);
    expect(re.test('-9223372036854775808')).toBe(true);
    expect(re.test('-9223372036854775809')).toBe(false);
  });
});

describe('decimal bounds as regexes', () => {
  it('agrees with numeric comparison on many samples', () => {
    const cases: Array<[number, boolean]> = [
      [0, false],
      [0, true],
      [-2.5, false],
      [3.75, true],
      [0.125, false],
      [-0.125, true],
      [10, false],
      [1e-7, false],
    ];
    const samples: string[] = [
      '0',
      '-0',
      '0.0',
      '10',
      '10.0',
      '10.5',
      '9.999',
      '3.75',
      '3.7500',
      '3.751',
      '-2.5',
      '-2.50',
      '-2.4999',
      '-2.5001',
    ];
    const rng = new Generator(7);
    for (let i = 0; i < 3000; i++) {
      const int = Math.floor(rng.random() * 15);
      const frac =
        rng.random() < 0.5
          ? ''
          : '.' + String(Math.floor(rng.random() * 100000)).padStart(Math.ceil(rng.random() * 6), '0');
      samples.push(`${rng.random() < 0.4 ? '-' : ''}${int}${frac}`);
    }
    samples.push('0.0000001', '0.00000009', '0.00000011');
    for (const [bound, strict] of cases) {
      const ge = full(decimalAtLeast(bound, strict));
      const le = full(decimalAtMost(bound, strict));
      for (const s of samples) {
        const x = Number(s);
        // Sound always; complete except that a lower bound of 0 does not generate negative zero.
        const negZero = /^-0(\.0*)?$/.test(s);
        const geTruth = strict ? x > bound : x >= bound;
        const leTruth = strict ? x < bound : x <= bound;
        if (ge.test(s) || !negZero)
          expect([bound, strict, s, 'ge', ge.test(s)]).toEqual([bound, strict, s, 'ge', geTruth]);
        if (le.test(s) || !negZero)
          expect([bound, strict, s, 'le', le.test(s)]).toEqual([bound, strict, s, 'le', leTruth]);
      }
      expect(ge.test('1e5')).toBe(false); // no exponents under bounds
    }
  });
});
