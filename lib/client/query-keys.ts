import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { createLoader, parseAsStringLiteral } from 'nuqs/server';
import { sessionSchema } from '@/lib/schemas/accounts';
import { baseModelListSchema } from '@/lib/schemas/base-models';
import { modelListSchema } from '@/lib/schemas/models';
import { apiFetch } from './api-fetch';
import { apiKeyListSchema, teamListSchema } from '@/lib/schemas/accounts';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';
import { modelSummarySchema, projectListSchema } from '@/lib/schemas/models';
import {
  entityJobListSchema,
  jobEventListSchema,
  trainingJobListSchema,
  trainingJobSchema,
  EVENT_TYPES,
  type JobEventDto,
} from '@/lib/schemas/training-jobs';
import {
  historySchema,
  trajectoryGroupListSchema,
  trajectoryStepListSchema,
  type HistoryAxis,
} from '@/lib/schemas/trajectories';
import { openApiDocumentSchema } from './openapi-document';
import { checkpointListSchema } from '@/lib/schemas/checkpoints';
import { abVoteSummarySchema } from '@/lib/schemas/ab-votes';
import { openAiModelListSchema } from '@/lib/schemas/openai-models';
import { usageListSchema } from '@/lib/schemas/usage';
import { trainingWorkerListSchema } from '@/lib/schemas/training-workers';

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
  projects: {
    all: () => ['projects'] as const,
    list: (entity: string) => [...queryKeys.projects.all(), 'list', entity] as const,
  },
  model: {
    // Under `models` so that invalidating models.all() after a create or delete refreshes detail pages too.
    all: (modelId: string) => [...queryKeys.models.all(), 'detail', modelId] as const,
    summary: (modelId: string) => [...queryKeys.model.all(modelId), 'summary'] as const,
    checkpoints: (modelId: string) => [...queryKeys.model.all(modelId), 'checkpoints'] as const,
    checkpointPage: (modelId: string, cursor: string | undefined) =>
      [...queryKeys.model.checkpoints(modelId), 'page', cursor ?? null] as const,
    allCheckpoints: (modelId: string) => [...queryKeys.model.checkpoints(modelId), 'all'] as const,
    history: (modelId: string) => [...queryKeys.model.all(modelId), 'history'] as const,
    abVotes: (modelId: string) => [...queryKeys.model.all(modelId), 'ab-votes'] as const,
    jobs: (modelId: string) => [...queryKeys.model.all(modelId), 'jobs'] as const,
    trajectories: (modelId: string, filters: TrajectoryFilters) =>
      [...queryKeys.model.all(modelId), 'trajectories', filters] as const,
    trajectorySteps: (modelId: string) => [...queryKeys.model.all(modelId), 'trajectory-steps'] as const,
    /** The model's Tinker training client (null: the model is not one). */
    tinker: (modelId: string) => [...queryKeys.model.all(modelId), 'tinker'] as const,
  },
  /** Tinker training clients (docs/tinker.md): the Jobs page's list per entity, the Workers page's live ones. */
  tinkerClients: {
    all: () => ['tinker-clients'] as const,
    list: (entity: string) => [...queryKeys.tinkerClients.all(), 'list', entity] as const,
  },
  trainingWorkers: {
    all: () => ['training-workers'] as const,
  },
  jobs: {
    all: () => ['jobs'] as const,
    detail: (jobId: string) => [...queryKeys.jobs.all(), jobId] as const,
    summary: (jobId: string) => [...queryKeys.jobs.detail(jobId), 'summary'] as const,
    events: (jobId: string) => [...queryKeys.jobs.detail(jobId), 'events'] as const,
    eventPage: (jobId: string, cursor: string | undefined, view: EventListView = DEFAULT_EVENT_VIEW) =>
      [
        ...queryKeys.jobs.events(jobId),
        'page',
        view.newestFirst ? 'newest' : 'oldest',
        view.type ?? 'all',
        cursor ?? null,
      ] as const,
    allEvents: (jobId: string) => [...queryKeys.jobs.events(jobId), 'all'] as const,
    entityList: (entity: string, filter: EntityJobsFilter) =>
      [...queryKeys.jobs.all(), 'list', entity, filter] as const,
  },
  openApi: {
    document: () => ['openapi', 'document'] as const,
  },
  /** GET /v1/models: what chat completions can serve (base models and trained models by name). */
  chatModels: {
    all: () => ['chat-models'] as const,
  },
  /** Model pickers (SFT launch, playground): every model the user can reach, not one entity's page. */
  modelPicker: {
    all: () => [...queryKeys.models.all(), 'picker'] as const,
    list: (entity: string | null) => [...queryKeys.modelPicker.all(), entity] as const,
    checkpoints: (modelId: string) => [...queryKeys.models.all(), 'checkpoints-picker', modelId] as const,
  },
  datasets: {
    all: () => ['datasets'] as const,
  },
  /** Eval sets and runs (lib/client/eval-queries.ts holds their query options). */
  evals: {
    all: () => ['evals'] as const,
    sets: (project: string) => [...queryKeys.evals.all(), 'sets', project] as const,
    examples: (setId: string, cursor: string | null) =>
      [...queryKeys.evals.all(), 'set', setId, 'examples', cursor] as const,
    runs: (filter: Record<string, string>) => [...queryKeys.evals.all(), 'runs', filter] as const,
    run: (runId: string) => [...queryKeys.evals.all(), 'run', runId] as const,
    results: (runId: string, query: string) => [...queryKeys.evals.run(runId), 'results', query] as const,
    /** Under the model, so that deleting a model drops it too. */
    autoEval: (modelId: string) => [...queryKeys.model.all(modelId), 'auto-eval'] as const,
  },
  usage: {
    all: () => ['usage'] as const,
    list: (entity: string, days: number) => [...queryKeys.usage.all(), entity, days] as const,
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
  if (filters.project) params.set('project', filters.project);
  if (filters.baseModel) params.set('base_model', filters.baseModel);
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

export const chatModelsQuery = () =>
  queryOptions({
    queryKey: queryKeys.chatModels.all(),
    queryFn: ({ signal }) => apiFetch('/v1/models', openAiModelListSchema, { signal }),
    staleTime: 60_000,
  });

/** Pickers show up to 100 models, newest first; more than that wants a search box, not a select. */
export const MODEL_PICKER_LIMIT = 100;

export const modelPickerQuery = (entity: string | null) =>
  queryOptions({
    queryKey: queryKeys.modelPicker.list(entity),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(MODEL_PICKER_LIMIT) });
      if (entity) params.set('entity', entity);
      return apiFetch(`/v1/preview/models?${params}`, modelListSchema, { signal });
    },
  });

/** The newest 100 checkpoints of a model, highest step first: the steps a playground can chat with. */
export const checkpointPickerQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.modelPicker.checkpoints(modelId),
    queryFn: ({ signal }) =>
      apiFetch(
        `/v1/preview/models/${encodeURIComponent(modelId)}/checkpoints?order=desc&limit=100`,
        checkpointListSchema,
        {
          signal,
        },
      ),
  });

export const USAGE_DAY_OPTIONS = [7, 30, 90] as const;

export const usageQuery = (entity: string, days: number) =>
  queryOptions({
    queryKey: queryKeys.usage.list(entity, days),
    queryFn: ({ signal }) =>
      apiFetch(`/v1/usage?${new URLSearchParams({ entity, days: String(days) })}`, usageListSchema, { signal }),
  });

export const projectsQuery = (entity: string) =>
  queryOptions({
    queryKey: queryKeys.projects.list(entity),
    queryFn: ({ signal }) =>
      apiFetch(`/v1/preview/projects?${new URLSearchParams({ entity })}`, projectListSchema, { signal }),
  });

export const modelPath = (modelId: string) => `/v1/preview/models/${encodeURIComponent(modelId)}`;

export const modelQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.model.summary(modelId),
    queryFn: ({ signal }) => apiFetch(modelPath(modelId), modelSummarySchema, { signal }),
  });

export const CHECKPOINT_PAGE_SIZE = 20;

/** Newest step first: the checkpoint a person looks for is usually a recent one. */
export const checkpointPageQuery = (modelId: string, cursor: string | undefined) =>
  queryOptions({
    queryKey: queryKeys.model.checkpointPage(modelId, cursor),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(CHECKPOINT_PAGE_SIZE), order: 'desc' });
      if (cursor) params.set('after', cursor);
      return apiFetch(`${modelPath(modelId)}/checkpoints?${params}`, checkpointListSchema, { signal });
    },
  });

/**
 * Every checkpoint's metrics, for the "best" badge: the best one may sit on any page. Training clients
 * delete all but a few checkpoints, so this is usually one request; the cap keeps a model with
 * thousands of kept checkpoints from turning one page view into a crawl.
 */
export const MAX_CHECKPOINT_PAGES_FOR_BEST = 10;

export async function fetchAllCheckpoints(
  modelId: string,
  signal?: AbortSignal,
): Promise<{ data: CheckpointDto[]; complete: boolean }> {
  const data: CheckpointDto[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_CHECKPOINT_PAGES_FOR_BEST; page++) {
    const params = new URLSearchParams({ limit: '100', order: 'desc' });
    if (after) params.set('after', after);
    const list = await apiFetch(`${modelPath(modelId)}/checkpoints?${params}`, checkpointListSchema, { signal });
    data.push(...list.data);
    if (!list.has_more || !list.last_id) return { data, complete: true };
    after = list.last_id;
  }
  return { data, complete: false };
}

export const allCheckpointsQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.model.allCheckpoints(modelId),
    queryFn: ({ signal }) => fetchAllCheckpoints(modelId, signal),
  });

/**
 * Points per series: about one per pixel of a chart on a wide screen (each bucket keeps its lowest and highest
 * point, so the envelope of a long series is all there); a zoom fetches its range in detail. More points cost
 * drawing time on a page of many charts without showing anything more.
 */
export const HISTORY_MAX_POINTS = 500;
/** A zoomed chart is one chart: it can afford more. */
const HISTORY_DETAIL_MAX_POINTS = 1000;

/** The page preloads this exact URL (see the model page), so the request the query makes must not differ. */
export const historyUrl = (modelId: string) => `${modelPath(modelId)}/history?max_points=${HISTORY_MAX_POINTS}`;

export const historyQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.model.history(modelId),
    queryFn: ({ signal }) => apiFetch(historyUrl(modelId), historySchema, { signal }),
  });

/**
 * The model's training curve: every job's gradient steps on one x-axis, with the stretch each job covers. Under the
 * history key, so that the live model page refreshes it with the rest of the history.
 */
export const trainingCurveQuery = (modelId: string) =>
  queryOptions({
    queryKey: [...queryKeys.model.history(modelId), 'gradient_step'] as const,
    queryFn: ({ signal }) =>
      apiFetch(`${historyUrl(modelId)}&axis=gradient_step`, historySchema, {
        signal,
      }),
  });

/** Blind A/B votes between the model's checkpoints, tallied per pair of steps. */
export const abVotesQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.model.abVotes(modelId),
    queryFn: ({ signal }) => apiFetch(`${modelPath(modelId)}/ab-votes`, abVoteSummarySchema, { signal }),
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
    queryKey: [...queryKeys.model.history(modelId), 'range', axis, keys.join(','), from, to] as const,
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

export const MODEL_JOBS_PAGE_SIZE = 20;

export const modelJobsInfiniteQuery = (modelId: string) =>
  infiniteQueryOptions({
    queryKey: queryKeys.model.jobs(modelId),
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ limit: String(MODEL_JOBS_PAGE_SIZE) });
      if (pageParam) params.set('after', pageParam);
      return apiFetch(`${modelPath(modelId)}/training-jobs?${params}`, trainingJobListSchema, { signal });
    },
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more && lastPage.last_id ? lastPage.last_id : undefined),
  });

export interface TrajectoryFilters {
  step: number | null;
  split: string;
}

export const TRAJECTORY_PAGE_SIZE = 20;

export const trajectoriesInfiniteQuery = (modelId: string, filters: TrajectoryFilters) =>
  infiniteQueryOptions({
    queryKey: queryKeys.model.trajectories(modelId, filters),
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

export const TRAJECTORY_STEP_PAGE_SIZE = 100;

/** Steps that hold trajectories, newest first; the next page continues below the last step loaded. */
export const trajectoryStepsInfiniteQuery = (modelId: string) =>
  infiniteQueryOptions({
    queryKey: queryKeys.model.trajectorySteps(modelId),
    queryFn: ({ pageParam, signal }) => {
      const params = new URLSearchParams({ limit: String(TRAJECTORY_STEP_PAGE_SIZE) });
      if (pageParam !== undefined) params.set('before', String(pageParam));
      return apiFetch(`${modelPath(modelId)}/trajectory-steps?${params}`, trajectoryStepListSchema, { signal });
    },
    initialPageParam: undefined as number | undefined,
    getNextPageParam: (lastPage) => (lastPage.has_more ? lastPage.data.at(-1)?.step : undefined),
  });

const jobPath = (jobId: string) => `/v1/preview/training-jobs/${encodeURIComponent(jobId)}`;

export const jobQuery = (jobId: string) =>
  queryOptions({
    queryKey: queryKeys.jobs.summary(jobId),
    queryFn: ({ signal }) => apiFetch(jobPath(jobId), trainingJobSchema, { signal }),
  });

/** Connected training workers; refreshed every few seconds while the page is open (workers come and go). */
export const trainingWorkersQuery = () =>
  queryOptions({
    queryKey: queryKeys.trainingWorkers.all(),
    queryFn: ({ signal }) => apiFetch('/v1/preview/training-workers', trainingWorkerListSchema, { signal }),
    refetchInterval: 5000,
  });

export const ENTITY_JOBS_PAGE_SIZE = 25;

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

/** While a job is active its row moves (progress, status): the lists refresh every few seconds. */
export const entityJobsQuery = (entity: string, filter: EntityJobsFilter) =>
  queryOptions({
    queryKey: queryKeys.jobs.entityList(entity, filter),
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

export const EVENT_PAGE_SIZE = 25;

/** A page of the events table, chronological or (`newestFirst`, an API extension) newest first. */
/** How the job page lists events: newest first by default (the live end on top), optionally one type only. */
export interface EventListView {
  newestFirst: boolean;
  type: JobEventDto['type'] | null;
}
export const DEFAULT_EVENT_VIEW: EventListView = { newestFirst: true, type: null };

/**
 * The job page's URL state (`?events=oldest`, `?event_type=gradient_step`): nuqs parsers, read on the server for the
 * prefetch and kept in the URL by the client. Anything unknown is the default.
 */
export const eventViewParsers = {
  events: parseAsStringLiteral(['newest', 'oldest'] as const).withDefault('newest'),
  event_type: parseAsStringLiteral(EVENT_TYPES),
};
export const loadEventViewParams = createLoader(eventViewParsers);

export function eventViewOf(params: {
  events: 'newest' | 'oldest';
  event_type: JobEventDto['type'] | null;
}): EventListView {
  return { newestFirst: params.events !== 'oldest', type: params.event_type };
}

/** The view a job page URL asks for; anything unknown is the default. */
export function eventViewFromSearchParams(raw: Record<string, string | string[] | undefined>): EventListView {
  return eventViewOf(loadEventViewParams(raw));
}

export const jobEventPageQuery = (
  jobId: string,
  cursor: string | undefined,
  view: EventListView = DEFAULT_EVENT_VIEW,
) =>
  queryOptions({
    queryKey: queryKeys.jobs.eventPage(jobId, cursor, view),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(EVENT_PAGE_SIZE) });
      if (view.newestFirst) params.set('newest_first', 'true');
      if (view.type) params.set('event_type', view.type);
      if (cursor) params.set('after', cursor);
      return apiFetch(`${jobPath(jobId)}/events?${params}`, jobEventListSchema, { signal });
    },
  });

/**
 * Every event of a job so far, for the loss chart and the live tail. Events only ever append, so a
 * refetch continues after the last id it already holds instead of starting over (see useJobEventTail).
 */
export async function fetchEventsAfter(jobId: string, after: string | undefined, signal?: AbortSignal, maxPages = 50) {
  const data: JobEventDto[] = [];
  let cursor = after;
  for (let page = 0; page < maxPages; page++) {
    const params = new URLSearchParams({ limit: '100' });
    if (cursor) params.set('after', cursor);
    const list = await apiFetch(`${jobPath(jobId)}/events?${params}`, jobEventListSchema, { signal });
    data.push(...list.data);
    if (!list.has_more || !list.last_id) break;
    cursor = list.last_id;
  }
  return data;
}
