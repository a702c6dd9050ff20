import { queryOptions } from '@tanstack/react-query';
import { apiFetch, isApiClientError } from '../api/api-fetch';
import { isLiveClient } from '../tinker/tinker-clients';
import { modelKeys, modelPath } from './models';

/*
 * Keys and query options of the Tinker views (docs/tinker.md). Every page that shows training clients hydrates with
 * the server's answer, so their schemas are needed only for a refetch, and are imported then: a kilobyte out of each
 * page's first load, the model page's included (bench:ui, ≤ 250 kB).
 */

/** Tinker training clients: the Jobs page's list per entity, the Workers page's live ones, and a model's own. */
export const tinkerKeys = {
  all: () => ['tinker-clients'] as const,
  list: (entity: string) => [...tinkerKeys.all(), 'list', entity] as const,
  /** The model's Tinker training client (null: the model is not one), under the model. */
  ofModel: (modelId: string) => [...modelKeys.detail(modelId), 'tinker'] as const,
};

const schemas = () => import('@/lib/schemas/tinker-clients');

/** The Jobs page lists this many training clients, the live ones first, then the most recently used. */
export const TINKER_CLIENTS_LIMIT = 25;

/** While a training client is live its row moves (steps, open requests): the list refreshes every few seconds. */
export const tinkerClientsQuery = (entity: string) =>
  queryOptions({
    queryKey: tinkerKeys.list(entity),
    queryFn: async ({ signal }) =>
      apiFetch(
        `/v1/preview/tinker-training-clients?${new URLSearchParams({ entity, limit: String(TINKER_CLIENTS_LIMIT) })}`,
        (await schemas()).tinkerTrainingClientListSchema,
        { signal },
      ),
    refetchInterval: (query) => (query.state.data?.data.some(isLiveClient) ? 3000 : 15000),
  });

/**
 * The model's Tinker training client, its recent requests and saved weights; null for a model that is not one (the
 * route's 404). A model never becomes one later, so that answer stays fresh; a training client's own answer is
 * refreshed by useModelLive.
 */
export const modelTinkerQuery = (modelId: string) =>
  queryOptions({
    queryKey: tinkerKeys.ofModel(modelId),
    queryFn: async ({ signal }) => {
      try {
        return await apiFetch(`${modelPath(modelId)}/tinker`, (await schemas()).modelTinkerSchema, { signal });
      } catch (error) {
        if (isApiClientError(error) && error.status === 404) return null;
        throw error;
      }
    },
    staleTime: (query) => (query.state.data === null ? Infinity : 30_000),
  });
