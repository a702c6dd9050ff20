import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { sessionSchema } from '@/lib/schemas/accounts';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { modelListSchema } from '@/lib/schemas/models';
import { apiFetch } from './api-fetch';
import { apiKeyListSchema, teamListSchema } from '@/lib/schemas/accounts';
import { openApiDocumentSchema } from './openapi-document';

export interface ModelListFilters {
  entity: string;
  /** Case-insensitive substring of the model name; '' lists everything. */
  search: string;
}

export const MODEL_PAGE_SIZE = 20;

/**
 * Hierarchical keys: every key starts with its resource's `all()` prefix, so a mutation invalidates a
 * whole resource (`queryKeys.models.all()`) or one list without knowing which filters are cached.
 */
export const queryKeys = {
  session: () => ['session'] as const,
  apiKeys: {
    all: () => ['api-keys'] as const,
    list: () => [...queryKeys.apiKeys.all(), 'list'] as const,
  },
  teams: {
    all: () => ['teams'] as const,
    list: () => [...queryKeys.teams.all(), 'list'] as const,
  },
  models: {
    all: () => ['models'] as const,
    lists: () => [...queryKeys.models.all(), 'list'] as const,
    list: (filters: ModelListFilters) => [...queryKeys.models.lists(), filters] as const,
  },
  baseModels: {
    all: () => ['base-models'] as const,
  },
  openApi: {
    document: () => ['openapi', 'document'] as const,
  },
};

export const sessionQuery = () =>
  queryOptions({
    queryKey: queryKeys.session(),
    queryFn: ({ signal }) => apiFetch('/v1/auth/session', sessionSchema, { signal }),
  });

export const apiKeysQuery = () =>
  queryOptions({
    queryKey: queryKeys.apiKeys.list(),
    queryFn: ({ signal }) => apiFetch('/v1/api-keys', apiKeyListSchema, { signal }),
  });

export const teamsQuery = () =>
  queryOptions({
    queryKey: queryKeys.teams.list(),
    queryFn: ({ signal }) => apiFetch('/v1/teams', teamListSchema, { signal }),
  });

export function modelsPath(filters: ModelListFilters, after?: string): string {
  const params = new URLSearchParams({ entity: filters.entity, limit: String(MODEL_PAGE_SIZE) });
  if (filters.search) params.set('search', filters.search);
  if (after) params.set('after', after);
  return `/v1/preview/models?${params}`;
}

/** Newest first, one page per "Load more": the cursor is the last model id of the previous page. */
export const modelsInfiniteQuery = (filters: ModelListFilters) =>
  infiniteQueryOptions({
    queryKey: queryKeys.models.list(filters),
    queryFn: ({ pageParam, signal }) => apiFetch(modelsPath(filters, pageParam), modelListSchema, { signal }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more && lastPage.last_id ? lastPage.last_id : undefined),
  });

export const baseModelsQuery = () =>
  queryOptions({
    queryKey: queryKeys.baseModels.all(),
    queryFn: ({ signal }) => apiFetch('/v1/preview/base-models', baseModelListSchema, { signal }),
    staleTime: 5 * 60_000,
  });

export const openApiDocumentQuery = () =>
  queryOptions({
    queryKey: queryKeys.openApi.document(),
    queryFn: ({ signal }) => apiFetch('/v1/openapi.json', openApiDocumentSchema, { signal }),
    // The document only changes with a deploy.
    staleTime: Infinity,
  });
