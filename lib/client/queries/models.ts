import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { modelListSchema, modelSummarySchema, projectListSchema } from '@/lib/schemas/models';
import { openAiModelListSchema } from '@/lib/schemas/openai-models';
import { apiFetch } from '../api/api-fetch';

/*
 * Models: the Models page's list, one model's summary, the pickers, projects and base models, and what chat
 * completions can serve. Every key of one model (its checkpoints, history, jobs, trajectories: their own modules)
 * starts with modelKeys.detail(id), under modelKeys.all(), so that invalidating models.all() after a create or a
 * delete refreshes every model page too.
 */

export interface ModelListFilters {
  entity: string;
  /** Case-insensitive substring of the model name; '' lists everything. */
  search: string;
  /** Exact project name; absent or '' lists every project. */
  project?: string;
  /** Exact base model id; absent or '' lists every base model. */
  baseModel?: string;
}

export const MODEL_PAGE_SIZE = 20;

/**
 * Hierarchical keys: every key starts with its resource's `all()` prefix, so a mutation invalidates a whole resource
 * (`modelKeys.all()`) or one list without knowing which filters are cached.
 */
export const modelKeys = {
  all: () => ['models'] as const,
  lists: () => [...modelKeys.all(), 'list'] as const,
  list: (filters: ModelListFilters) => [...modelKeys.lists(), filters] as const,
  /** Everything of one model; the other modules' per-model keys start here. */
  detail: (modelId: string) => [...modelKeys.all(), 'detail', modelId] as const,
  summary: (modelId: string) => [...modelKeys.detail(modelId), 'summary'] as const,
  /** Model pickers (SFT launch, playground): every model the user can reach, not one entity's page. */
  pickers: () => [...modelKeys.all(), 'picker'] as const,
  picker: (entity: string | null) => [...modelKeys.pickers(), entity] as const,
};

export const projectKeys = {
  all: () => ['projects'] as const,
  list: (entity: string) => [...projectKeys.all(), 'list', entity] as const,
};

export const baseModelKeys = {
  all: () => ['base-models'] as const,
};

/** GET /v1/models: what chat completions can serve (base models and trained models by name). */
export const chatModelKeys = {
  all: () => ['chat-models'] as const,
};

export const modelPath = (modelId: string) => `/v1/preview/models/${encodeURIComponent(modelId)}`;

function modelsPath(filters: ModelListFilters, after?: string): string {
  const params = new URLSearchParams({ entity: filters.entity, limit: String(MODEL_PAGE_SIZE) });
  if (filters.search) params.set('search', filters.search);
  if (filters.project) params.set('project', filters.project);
  if (filters.baseModel) params.set('base_model', filters.baseModel);
  if (after) params.set('after', after);
  return `/v1/preview/models?${params}`;
}

/** Newest first, one page per "Load more": the cursor is the last model id of the previous page. */
export const modelsInfiniteQuery = (filters: ModelListFilters) =>
  infiniteQueryOptions({
    queryKey: modelKeys.list(filters),
    queryFn: ({ pageParam, signal }) => apiFetch(modelsPath(filters, pageParam), modelListSchema, { signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more && lastPage.last_id ? lastPage.last_id : undefined),
  });

export const modelQuery = (modelId: string) =>
  queryOptions({
    queryKey: modelKeys.summary(modelId),
    queryFn: ({ signal }) => apiFetch(modelPath(modelId), modelSummarySchema, { signal }),
  });

/** Pickers show up to 100 models, newest first; more than that wants a search box, not a select. */
export const MODEL_PICKER_LIMIT = 100;

export const modelPickerQuery = (entity: string | null) =>
  queryOptions({
    queryKey: modelKeys.picker(entity),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(MODEL_PICKER_LIMIT) });
      if (entity) params.set('entity', entity);
      return apiFetch(`/v1/preview/models?${params}`, modelListSchema, { signal });
    },
  });

export const projectsQuery = (entity: string) =>
  queryOptions({
    queryKey: projectKeys.list(entity),
    queryFn: ({ signal }) =>
      apiFetch(`/v1/preview/projects?${new URLSearchParams({ entity })}`, projectListSchema, { signal }),
  });

export const baseModelsQuery = () =>
  queryOptions({
    queryKey: baseModelKeys.all(),
    queryFn: ({ signal }) => apiFetch('/v1/preview/base-models', baseModelListSchema, { signal }),
    staleTime: 5 * 60_000,
  });

export const chatModelsQuery = () =>
  queryOptions({
    queryKey: chatModelKeys.all(),
    queryFn: ({ signal }) => apiFetch('/v1/models', openAiModelListSchema, { signal }),
    staleTime: 60_000,
  });
