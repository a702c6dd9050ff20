import { queryOptions } from '@tanstack/react-query';
import { COMPARE_CURVE_POINTS, compareCurvesSchema } from '@/lib/schemas/comparison';
import { apiFetch } from '../api/api-fetch';

/*
 * Run comparison: every compared model's training curve in one request. The page preloads this exact URL with its
 * HTML (app/(dashboard)/compare/page.tsx), so the request the query makes must not differ from it.
 */
export const compareKeys = {
  all: () => ['compare'] as const,
  curves: (modelIds: readonly string[]) => [...compareKeys.all(), 'curves', modelIds.join(',')] as const,
};

export const compareCurvesUrl = (modelIds: readonly string[]) =>
  `/v1/preview/compare/curves?model_ids=${modelIds.join(',')}&max_points=${COMPARE_CURVE_POINTS}`;

export const compareCurvesQuery = (modelIds: readonly string[]) =>
  queryOptions({
    queryKey: compareKeys.curves(modelIds),
    queryFn: ({ signal }) => apiFetch(compareCurvesUrl(modelIds), compareCurvesSchema, { signal }),
  });
