import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { entityJobListSchema, trainingJobListSchema, trainingJobSchema } from '@/lib/schemas/training-jobs';
import { apiFetch } from '../api/api-fetch';
import { modelKeys, modelPath } from './models';

/** The Jobs page's two lists: the active jobs (running first), and the history page by page. */
export type EntityJobsFilter =
  | { kind: 'active' }
  | {
      kind: 'page';
      status: 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED' | null;
      cursor: string | null;
      /** The Jobs page's other filters (all optional): job kind, project, model and a search text. */
      jobKind?: 'rl' | 'sft' | null;
      project?: string | null;
      modelId?: string | null;
      search?: string | null;
    };

/** Training jobs: one job (its events: job-events.ts), an entity's lists, and a model's jobs (under the model). */
export const jobKeys = {
  all: () => ['jobs'] as const,
  detail: (jobId: string) => [...jobKeys.all(), jobId] as const,
  summary: (jobId: string) => [...jobKeys.detail(jobId), 'summary'] as const,
  entityList: (entity: string, filter: EntityJobsFilter) => [...jobKeys.all(), 'list', entity, filter] as const,
  /** Under the model, so that a model page's refresh and a model's deletion reach its jobs. */
  ofModel: (modelId: string) => [...modelKeys.detail(modelId), 'jobs'] as const,
};

export const jobPath = (jobId: string) => `/v1/preview/training-jobs/${encodeURIComponent(jobId)}`;

export const jobQuery = (jobId: string) =>
  queryOptions({
    queryKey: jobKeys.summary(jobId),
    queryFn: ({ signal }) => apiFetch(jobPath(jobId), trainingJobSchema, { signal }),
  });

export const MODEL_JOBS_PAGE_SIZE = 20;

export const modelJobsInfiniteQuery = (modelId: string) =>
  infiniteQueryOptions({
    queryKey: jobKeys.ofModel(modelId),
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ limit: String(MODEL_JOBS_PAGE_SIZE) });
      if (pageParam) params.set('after', pageParam);
      return apiFetch(`${modelPath(modelId)}/training-jobs?${params}`, trainingJobListSchema, { signal });
    },
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more && lastPage.last_id ? lastPage.last_id : undefined),
  });

export const ENTITY_JOBS_PAGE_SIZE = 25;

/** While a job is active its row moves (progress, status): the lists refresh every few seconds. */
export const entityJobsQuery = (entity: string, filter: EntityJobsFilter) =>
  queryOptions({
    queryKey: jobKeys.entityList(entity, filter),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ entity });
      if (filter.kind === 'active') params.set('active', 'true');
      else {
        params.set('limit', String(ENTITY_JOBS_PAGE_SIZE));
        if (filter.status) params.set('status', filter.status);
        if (filter.jobKind) params.set('kind', filter.jobKind);
        if (filter.project) params.set('project', filter.project);
        if (filter.modelId) params.set('model_id', filter.modelId);
        if (filter.search?.trim()) params.set('q', filter.search.trim());
        if (filter.cursor) params.set('after', filter.cursor);
      }
      return apiFetch(`/v1/preview/training-jobs?${params}`, entityJobListSchema, { signal });
    },
    refetchInterval: (query) =>
      query.state.data?.data.some((j) => j.status === 'RUNNING' || j.status === 'QUEUED') ? 3000 : 15000,
  });
