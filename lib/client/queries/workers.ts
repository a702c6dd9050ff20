import { queryOptions } from '@tanstack/react-query';
import { trainingWorkerListSchema } from '@/lib/schemas/training-workers';
import { apiFetch } from '../api/api-fetch';

export const trainingWorkerKeys = {
  all: () => ['training-workers'] as const,
};

/** Connected training workers; refreshed every few seconds while the page is open (workers come and go). */
export const trainingWorkersQuery = () =>
  queryOptions({
    queryKey: trainingWorkerKeys.all(),
    queryFn: ({ signal }) => apiFetch('/v1/preview/training-workers', trainingWorkerListSchema, { signal }),
    refetchInterval: 5000,
  });
