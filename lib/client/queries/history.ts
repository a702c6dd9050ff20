import { queryOptions } from '@tanstack/react-query';
import { historySchema, type HistoryAxis } from '@/lib/schemas/trajectories';
import { apiFetch } from '../api/api-fetch';
import { modelKeys, modelPath } from './models';

/** A model's metric history: the model page's charts, its training curve, a zoomed chart's range. */
export const historyKeys = {
  all: (modelId: string) => [...modelKeys.detail(modelId), 'history'] as const,
  /** Under all(), so that the live model page refreshes it with the rest of the history. */
  trainingCurve: (modelId: string) => [...historyKeys.all(modelId), 'gradient_step'] as const,
  range: (modelId: string, axis: HistoryAxis, keys: readonly string[], from: number, to: number) =>
    [...historyKeys.all(modelId), 'range', axis, keys.join(','), from, to] as const,
};

/**
 * Points per series: about one per pixel of a chart on a wide screen (each bucket keeps its lowest and highest
 * point, so the envelope of a long series is all there); a zoom fetches its range in detail. More points cost
 * drawing time on a page of many charts without showing anything more.
 */
const HISTORY_MAX_POINTS = 500;
/** A zoomed chart is one chart: it can afford more. */
const HISTORY_DETAIL_MAX_POINTS = 1000;

/** The page preloads this exact URL (see the model page), so the request the query makes must not differ. */
export const historyUrl = (modelId: string) => `${modelPath(modelId)}/history?max_points=${HISTORY_MAX_POINTS}`;

export const historyQuery = (modelId: string) =>
  queryOptions({
    queryKey: historyKeys.all(modelId),
    queryFn: ({ signal }) => apiFetch(historyUrl(modelId), historySchema, { signal }),
  });

/** The training curve's address (a page preloads it with its HTML; the query then finds it fetched). */
export const trainingCurveUrl = (modelId: string) => `${historyUrl(modelId)}&axis=gradient_step`;

/** The model's training curve: every job's gradient steps on one x-axis, with the stretch each job covers. */
export const trainingCurveQuery = (modelId: string) =>
  queryOptions({
    queryKey: historyKeys.trainingCurve(modelId),
    queryFn: ({ signal }) => apiFetch(trainingCurveUrl(modelId), historySchema, { signal }),
  });

/** The named series within a step range, for a zoomed chart: a long series shows its real detail there. */
export const historyRangeQuery = (
  modelId: string,
  keys: readonly string[],
  from: number,
  to: number,
  axis: HistoryAxis = 'checkpoint',
) =>
  queryOptions({
    queryKey: historyKeys.range(modelId, axis, keys, from, to),
    queryFn: ({ signal }) => {
      const query = new URLSearchParams({
        axis,
        keys: keys.join(','),
        from_step: String(from),
        to_step: String(to),
        max_points: String(HISTORY_DETAIL_MAX_POINTS),
      });
      return apiFetch(`${modelPath(modelId)}/history?${query}`, historySchema, { signal });
    },
  });
