import { describe, expect, it } from 'vitest';
import { formatDateTime, formatDuration } from './format-time';

describe('formatDateTime', () => {
  it('prints the midnight hour as 00, as browsers do, so server HTML and hydration agree', () => {
    expect(formatDateTime('2026-11-22T00:10:24.302Z', 'UTC')).toBe('Nov 22, 2026, 00:10 UTC');
    expect(formatDateTime('2026-11-22T23:59:00Z', 'UTC')).toBe('Nov 22, 2026, 23:59 UTC');
    // Event rows: seconds apart, so seconds shown (issue 41).
    expect(formatDateTime('2026-11-22T00:10:24.302Z', 'UTC', { seconds: true })).toBe('Nov 22, 2026, 00:10:24 UTC');
  });
});

describe('formatDuration below a second (issue 41)', () => {
  it('never says "0 s" for a job that ran', () => {
    expect(formatDuration(400)).toBe('0.4 s');
    expect(formatDuration(20)).toBe('under 0.1 s');
    expect(formatDuration(1_400)).toBe('1 s');
    expect(formatDuration(65_000)).toBe('1 min 5 s');
  });
});
