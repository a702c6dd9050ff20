'use client';

import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from './api-fetch';
import {
  autoEvalSchema,
  evalExampleListSchema,
  evalRunListSchema,
  evalRunSchema,
  evalSetListSchema,
  evalSetSchema,
  isActiveRun,
  resultListSchema,
  type EvalSettings,
  type RunBody,
} from './evals';
import { modelPath, queryKeys } from './query-keys';
import { uploadJsonl } from './upload-dataset';

/*
 * The Evals view's queries and writes (the evaluation API, docs/contract.md "Evaluations"). Apart from query-keys.ts
 * and mutations.ts, which most pages load: only the Evals pages and the model page's Evals card import this.
 */

const SETS_LIMIT = 100;
export const EXAMPLES_PAGE_SIZE = 10;
export const RESULTS_PAGE_SIZE = 20;
const RUNS_LIMIT = 50;

const evalRunPath = (runId: string) => `/v1/preview/eval-runs/${encodeURIComponent(runId)}`;

/** Every version of every set (newest first); `project` narrows it. */
export const evalSetsQuery = (project = '') =>
  queryOptions({
    queryKey: queryKeys.evals.sets(project),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(SETS_LIMIT) });
      if (project) params.set('project', project);
      return apiFetch(`/v1/preview/eval-sets?${params}`, evalSetListSchema, { signal });
    },
  });

export const evalExamplesQuery = (setId: string, cursor: string | null) =>
  queryOptions({
    queryKey: queryKeys.evals.examples(setId, cursor),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(EXAMPLES_PAGE_SIZE) });
      if (cursor) params.set('after', cursor);
      return apiFetch(`/v1/preview/eval-sets/${encodeURIComponent(setId)}/examples?${params}`, evalExampleListSchema, {
        signal,
      });
    },
    // A version never changes.
    staleTime: Infinity,
  });

/** Runs newest first, filtered by `eval_set_id`, `model_id` or `project`; refreshed every 2 s while one is open. */
export const evalRunsQuery = (filter: Record<string, string> = {}) =>
  queryOptions({
    queryKey: queryKeys.evals.runs(filter),
    queryFn: ({ signal }) =>
      apiFetch(
        `/v1/preview/eval-runs?${new URLSearchParams({ ...filter, limit: String(RUNS_LIMIT) })}`,
        evalRunListSchema,
        { signal },
      ),
    refetchInterval: (query) => (query.state.data?.data.some((r) => isActiveRun(r.status)) ? 2000 : false),
  });

/** One run; every second while it is queued or running (the server reports progress about once a second). */
export const evalRunQuery = (runId: string) =>
  queryOptions({
    queryKey: queryKeys.evals.run(runId),
    queryFn: ({ signal }) => apiFetch(evalRunPath(runId), evalRunSchema, { signal }),
    refetchInterval: (query) => (query.state.data && isActiveRun(query.state.data.status) ? 1000 : false),
  });

/** A page of the per-example results; `query` is resultsQuery()'s string (limit, cursor, filter). */
export const evalResultsQuery = (runId: string, query: string, live: boolean) =>
  queryOptions({
    queryKey: queryKeys.evals.results(runId, query),
    queryFn: ({ signal }) => apiFetch(`${evalRunPath(runId)}/results?${query}`, resultListSchema, { signal }),
    // While the run is open, rows fill in as targets answer.
    refetchInterval: live ? 3000 : false,
  });

export const autoEvalQuery = (modelId: string) =>
  queryOptions({
    queryKey: queryKeys.evals.autoEval(modelId),
    queryFn: ({ signal }) => apiFetch(`${modelPath(modelId)}/auto-eval`, autoEvalSchema, { signal }),
  });

export function useUploadEvalSet() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ entity, project, name, file }: { entity: string; project: string; name: string; file: File }) =>
      uploadJsonl(
        `/v1/preview/eval-sets?${new URLSearchParams({ project, name, ...(entity ? { entity } : {}) })}`,
        file,
        evalSetSchema,
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [...queryKeys.evals.all(), 'sets'] }),
  });
}

export function useStartEvalRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RunBody) => apiFetch('/v1/preview/eval-runs', evalRunSchema, { method: 'POST', json: body }),
    onSuccess: (run) => {
      queryClient.setQueryData(queryKeys.evals.run(run.id), run);
      return queryClient.invalidateQueries({ queryKey: [...queryKeys.evals.all(), 'runs'] });
    },
  });
}

export function useCancelEvalRun(runId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(`${evalRunPath(runId)}/cancel`, evalRunSchema, { method: 'POST' }),
    onSuccess: (run) => {
      queryClient.setQueryData(queryKeys.evals.run(runId), run);
      return queryClient.invalidateQueries({ queryKey: [...queryKeys.evals.all(), 'runs'] });
    },
  });
}

export function useSetAutoEval(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (autoEval: EvalSettings | null) =>
      apiFetch(`${modelPath(modelId)}/auto-eval`, autoEvalSchema, { method: 'PUT', json: autoEval }),
    onSuccess: (data) => {
      queryClient.setQueryData(queryKeys.evals.autoEval(modelId), data);
    },
  });
}
