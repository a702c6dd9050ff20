import { USAGE_DAY_OPTIONS } from '@/lib/client/query-keys';
import type { UsageGroupBy } from '@/lib/client/usage';

/** The usage page's URL state: `?entity=`, `?days=` (7, 30 or 90) and `?group=` (model or project). */
export interface UsageSearchParams {
  entity: string | undefined;
  days: number;
  group: UsageGroupBy;
}

type RawSearchParams = Record<string, string | string[] | undefined>;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export const DEFAULT_USAGE_DAYS = 30;

export function parseUsageDays(raw: string | null | undefined): number {
  const days = Number(raw);
  return (USAGE_DAY_OPTIONS as readonly number[]).includes(days) ? days : DEFAULT_USAGE_DAYS;
}

export function parseUsageSearchParams(raw: RawSearchParams): UsageSearchParams {
  return {
    entity: first(raw.entity) || undefined,
    days: parseUsageDays(first(raw.days)),
    group: first(raw.group) === 'project' ? 'project' : 'model',
  };
}
