import { describe, expect, it } from 'vitest';
import { isTerminalStatus, pollDelay, progressFraction } from './poll-backoff';

describe('pollDelay', () => {
  it('starts at 1 s and backs off to 5 s', () => {
    expect(pollDelay(0)).toBe(1000);
    expect(pollDelay(1)).toBe(1500);
    expect(pollDelay(2)).toBe(2250);
    expect(pollDelay(10)).toBe(5000);
    expect(pollDelay(-3)).toBe(1000);
  });
});

describe('job helpers', () => {
  it('knows terminal statuses', () => {
    expect(isTerminalStatus('COMPLETED')).toBe(true);
    expect(isTerminalStatus('FAILED')).toBe(true);
    expect(isTerminalStatus('RUNNING')).toBe(false);
  });

  it('computes progress only when the total is known', () => {
    expect(progressFraction(3, 4)).toBe(0.75);
    expect(progressFraction(3, null)).toBeNull();
    expect(progressFraction(0, 0)).toBeNull();
    expect(progressFraction(9, 4)).toBe(1);
  });
});
