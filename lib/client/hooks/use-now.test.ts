import { describe, expect, it } from 'vitest';
import { remainingMs } from './use-now';

describe('remainingMs', () => {
  it('extrapolates the pace so far, and says nothing before the first step or without a total', () => {
    expect(remainingMs(10_000, 5, 25)).toBe(40_000);
    expect(remainingMs(10_000, 0, 25)).toBeNull();
    expect(remainingMs(10_000, 5, null)).toBeNull();
    expect(remainingMs(10_000, 25, 25)).toBeNull();
  });
});
