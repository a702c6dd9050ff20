import { queryOptions } from '@tanstack/react-query';
import { abVoteSummarySchema } from '@/lib/schemas/ab-votes';
import { apiFetch } from '../api/api-fetch';
import { modelKeys, modelPath } from './models';

export const abVoteKeys = {
  all: (modelId: string) => [...modelKeys.detail(modelId), 'ab-votes'] as const,
};

/** Blind A/B votes between the model's checkpoints, tallied per pair of steps. */
export const abVotesQuery = (modelId: string) =>
  queryOptions({
    queryKey: abVoteKeys.all(modelId),
    queryFn: ({ signal }) => apiFetch(`${modelPath(modelId)}/ab-votes`, abVoteSummarySchema, { signal }),
  });
