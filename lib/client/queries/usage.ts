import { queryOptions } from '@tanstack/react-query';
import { usageListSchema } from '@/lib/schemas/usage';
import { apiFetch } from '../api/api-fetch';

/** Token usage per day (the Usage page); the playground's requests make it stale. */
export const usageKeys = {
  all: () => ['usage'] as const,
  list: (entity: string, days: number) => [...usageKeys.all(), entity, days] as const,
};

export const USAGE_DAY_OPTIONS = [7, 30, 90] as const;

export const usageQuery = (entity: string, days: number) =>
  queryOptions({
    queryKey: usageKeys.list(entity, days),
    queryFn: ({ signal }) =>
      apiFetch(`/v1/usage?${new URLSearchParams({ entity, days: String(days) })}`, usageListSchema, { signal }),
  });
