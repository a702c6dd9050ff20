import { describe, expect, it } from 'vitest';
import { formatDateTime } from './format-time';

describe('formatDateTime', () => {
  it('prints the midnight hour as 00, as browsers do, so server HTML and hydration agree', () => {
    expect(formatDateTime('2026-11-22T00:10:24.302Z', 'UTC')).toBe('Nov 22, 2026, 00:10 UTC');
    expect(formatDateTime('2026-11-22T23:59:00Z', 'UTC')).toBe('Nov 22, 2026, 23:59 UTC');
    // Event rows: seconds apart, so seconds shown (issue 41).
    expect(formatDateTime('2026-11-22T00:10:24.302Z', 'UTC', { seconds: true })).toBe('Nov 22, 2026, 00:10:24 UTC');
  });
});
