/**
 * Series colours: mid-lightness hues that keep ≥ 3:1 contrast against both the light and the dark card
 * background (WCAG non-text contrast), in the order series are drawn (train, val, then the rest).
 */
// Eight: run comparison draws up to eight runs on one chart, each in its own colour.
export const SERIES_COLORS = [
  '#6366f1',
  '#d97706',
  '#059669',
  '#db2777',
  '#0891b2',
  '#9333ea',
  '#dc2626',
  '#65a30d',
] as const;

export function seriesColor(index: number): string {
  return SERIES_COLORS[index % SERIES_COLORS.length];
}
