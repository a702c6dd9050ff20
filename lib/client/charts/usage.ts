import type { z } from 'zod';
import type { usageRowSchema } from '@/lib/schemas/usage';

export type UsageRow = z.infer<typeof usageRowSchema>;
export type UsageGroupBy = 'model' | 'project';

export interface UsageTotals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface UsageTableRow extends UsageTotals {
  project: string;
  model: string;
  /** The last UTC day with traffic, YYYY-MM-DD. */
  last_day: string;
}

/** One bar of the chart: the day, then total tokens per series key. */
export type UsageDayPoint = { day: string } & Record<string, number | string>;

export interface UsageChartData {
  /** Series keys in stacking order, largest first; "Other" last when the groups were capped. */
  series: string[];
  points: UsageDayPoint[];
}

export const OTHER_SERIES = 'Other';

const emptyTotals = (): UsageTotals => ({ requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

function add(into: UsageTotals, row: UsageRow): void {
  into.requests += row.requests;
  into.prompt_tokens += row.prompt_tokens;
  into.completion_tokens += row.completion_tokens;
  into.total_tokens += row.prompt_tokens + row.completion_tokens;
}

export function usageTotals(rows: readonly UsageRow[]): UsageTotals {
  const totals = emptyTotals();
  for (const row of rows) add(totals, row);
  return totals;
}

/** One line per project and model, most tokens first (ties by name, so the order is stable). */
export function usageTable(rows: readonly UsageRow[]): UsageTableRow[] {
  const groups = new Map<string, UsageTableRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.project, row.model]);
    let group = groups.get(key);
    if (!group) {
      group = { project: row.project, model: row.model, last_day: row.day, ...emptyTotals() };
      groups.set(key, group);
    }
    add(group, row);
    if (row.day > group.last_day) group.last_day = row.day;
  }
  return [...groups.values()].sort(
    (a, b) => b.total_tokens - a.total_tokens || a.project.localeCompare(b.project) || a.model.localeCompare(b.model),
  );
}

/** The UTC days of the window, oldest first: `days` days ending with `today` (YYYY-MM-DD). */
export function usageDays(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * Tokens per day stacked by model or project. A day without traffic is a real zero (no requests were
 * made), unlike a missing metric, so every day of the window gets a bar. Only the `maxSeries` largest
 * groups get their own colour; the rest are summed as "Other" so that the legend stays readable.
 */
export function usageChartData(
  rows: readonly UsageRow[],
  { today, days, groupBy, maxSeries = 6 }: { today: string; days: number; groupBy: UsageGroupBy; maxSeries?: number },
): UsageChartData {
  const byGroup = new Map<string, number>();
  for (const row of rows)
    byGroup.set(row[groupBy], (byGroup.get(row[groupBy]) ?? 0) + row.prompt_tokens + row.completion_tokens);
  const ranked = [...byGroup.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([name]) => name);
  const capped = ranked.length > maxSeries;
  const named = capped ? ranked.slice(0, maxSeries - 1) : ranked;
  const series = capped ? [...named, OTHER_SERIES] : named;
  const seriesOf = (group: string) => (named.includes(group) ? group : OTHER_SERIES);

  const points = new Map<string, UsageDayPoint>();
  for (const day of usageDays(today, days)) {
    const point: UsageDayPoint = { day };
    for (const key of series) point[key] = 0;
    points.set(day, point);
  }
  for (const row of rows) {
    const point = points.get(row.day);
    if (!point) continue; // outside the window (a clock skew between server and browser)
    const key = seriesOf(row[groupBy]);
    point[key] = (point[key] as number) + row.prompt_tokens + row.completion_tokens;
  }
  return { series, points: [...points.values()] };
}

/** "12,345" — tokens and requests are counts, shown whole. */
export function formatCount(value: number): string {
  return value.toLocaleString('en');
}

/** "1.2k", "3.4M": for chart axes, where space is short. */
export function formatCompact(value: number): string {
  return new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}
