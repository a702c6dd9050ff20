import { queryOptions } from '@tanstack/react-query';
import { checkpointListSchema, type CheckpointDto } from '@/lib/schemas/checkpoints';
import { apiFetch } from '../api/api-fetch';
import { modelKeys, modelPath } from './models';

/** A model's checkpoints: the model page's table, every checkpoint for the "best" badge, and the pickers' steps. */
export const checkpointKeys = {
  all: (modelId: string) => [...modelKeys.detail(modelId), 'checkpoints'] as const,
  page: (modelId: string, cursor: string | undefined) =>
    [...checkpointKeys.all(modelId), 'page', cursor ?? null] as const,
  every: (modelId: string) => [...checkpointKeys.all(modelId), 'all'] as const,
  /** The pickers' list, under modelKeys.all() (a model created or deleted refreshes it). */
  picker: (modelId: string) => [...modelKeys.all(), 'checkpoints-picker', modelId] as const,
};

const checkpointsPath = (modelId: string, params: URLSearchParams) => `${modelPath(modelId)}/checkpoints?${params}`;

/** The newest 100 checkpoints of a model, highest step first: the steps a playground can chat with. */
export const checkpointPickerQuery = (modelId: string) =>
  queryOptions({
    queryKey: checkpointKeys.picker(modelId),
    queryFn: ({ signal }) =>
      apiFetch(checkpointsPath(modelId, new URLSearchParams({ order: 'desc', limit: '100' })), checkpointListSchema, {
        signal,
      }),
  });

export const CHECKPOINT_PAGE_SIZE = 20;

/** Newest step first: the checkpoint a person looks for is usually a recent one. */
export const checkpointPageQuery = (modelId: string, cursor: string | undefined) =>
  queryOptions({
    queryKey: checkpointKeys.page(modelId, cursor),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(CHECKPOINT_PAGE_SIZE), order: 'desc' });
      if (cursor) params.set('after', cursor);
      return apiFetch(checkpointsPath(modelId, params), checkpointListSchema, { signal });
    },
  });

/**
 * Every checkpoint's metrics, for the "best" badge: the best one may sit on any page. Training clients
 * delete all but a few checkpoints, so this is usually one request; the cap keeps a model with
 * thousands of kept checkpoints from turning one page view into a crawl.
 */
const MAX_CHECKPOINT_PAGES_FOR_BEST = 10;

async function fetchAllCheckpoints(
  modelId: string,
  signal?: AbortSignal,
): Promise<{ data: CheckpointDto[]; complete: boolean }> {
  const data: CheckpointDto[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_CHECKPOINT_PAGES_FOR_BEST; page++) {
    const params = new URLSearchParams({ limit: '100', order: 'desc' });
    if (after) params.set('after', after);
    const list = await apiFetch(checkpointsPath(modelId, params), checkpointListSchema, { signal });
    data.push(...list.data);
    if (!list.has_more || !list.last_id) return { data, complete: true };
    after = list.last_id;
  }
  return { data, complete: false };
}

export const allCheckpointsQuery = (modelId: string) =>
  queryOptions({
    queryKey: checkpointKeys.every(modelId),
    queryFn: ({ signal }) => fetchAllCheckpoints(modelId, signal),
  });
