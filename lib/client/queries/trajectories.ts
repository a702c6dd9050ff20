import { infiniteQueryOptions } from '@tanstack/react-query';
import { trajectoryGroupListSchema, trajectoryStepListSchema } from '@/lib/schemas/trajectories';
import { apiFetch } from '../api/api-fetch';
import { modelKeys, modelPath } from './models';

export interface TrajectoryFilters {
  step: number | null;
  split: string;
}

/** An RL model's stored trajectory groups (the model page's Trajectories tab) and the steps that hold them. */
export const trajectoryKeys = {
  list: (modelId: string, filters: TrajectoryFilters) =>
    [...modelKeys.detail(modelId), 'trajectories', filters] as const,
  steps: (modelId: string) => [...modelKeys.detail(modelId), 'trajectory-steps'] as const,
};

const TRAJECTORY_PAGE_SIZE = 20;

export const trajectoriesInfiniteQuery = (modelId: string, filters: TrajectoryFilters) =>
  infiniteQueryOptions({
    queryKey: trajectoryKeys.list(modelId, filters),
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ limit: String(TRAJECTORY_PAGE_SIZE) });
      if (filters.step !== null) params.set('step', String(filters.step));
      if (filters.split) params.set('split', filters.split);
      if (pageParam) params.set('after', pageParam);
      return apiFetch(`${modelPath(modelId)}/trajectories?${params}`, trajectoryGroupListSchema, { signal });
    },
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more && lastPage.last_id ? lastPage.last_id : undefined),
  });

const TRAJECTORY_STEP_PAGE_SIZE = 100;

/** Steps that hold trajectories, newest first; the next page continues below the last step loaded. */
export const trajectoryStepsInfiniteQuery = (modelId: string) =>
  infiniteQueryOptions({
    queryKey: trajectoryKeys.steps(modelId),
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ limit: String(TRAJECTORY_STEP_PAGE_SIZE) });
      if (pageParam !== undefined) params.set('before', String(pageParam));
      return apiFetch(`${modelPath(modelId)}/trajectory-steps?${params}`, trajectoryStepListSchema, { signal });
    },
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more ? lastPage.data.at(-1)?.step : undefined),
  });
