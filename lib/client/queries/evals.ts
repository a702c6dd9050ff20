'use client';

import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { z } from 'zod';
import { apiFetch } from '../api/api-fetch';
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
} from '../evals/evals';
import { uploadJsonl } from '../api/upload-dataset';
import { modelKeys, modelPath } from './models';

/*
 * The Evals view's keys, queries and writes (the evaluation API, docs/contract.md "Evaluations"). Apart from
 * mutations.ts, which most pages load: only the Evals pages and the model page's Evals card import this.
 */

/** Eval sets and runs; a model's auto-eval settings sit under the model, so that deleting a model drops them too. */
export const evalKeys = {
  all: () => ['evals'] as const,
  sets: (project: string) => [...evalKeys.all(), 'sets', project] as const,
  examples: (setId: string, cursor: string | null) => [...evalKeys.all(), 'set', setId, 'examples', cursor] as const,
  runs: (filter: Record<string, string>) => [...evalKeys.all(), 'runs', filter] as const,
  run: (runId: string) => [...evalKeys.all(), 'run', runId] as const,
  results: (runId: string, query: string) => [...evalKeys.run(runId), 'results', query] as const,
  autoEval: (modelId: string) => [...modelKeys.detail(modelId), 'auto-eval'] as const,
};

const SETS_LIMIT = 100;
export const EXAMPLES_PAGE_SIZE = 10;
export const RESULTS_PAGE_SIZE = 20;
const RUNS_LIMIT = 50;

const evalRunPath = (runId: string) => `/v1/preview/eval-runs/${encodeURIComponent(runId)}`;

/** Every version of every set (newest first); `project` narrows it. */
export const evalSetsQuery = (project = '') =>
  queryOptions({
    queryKey: evalKeys.sets(project),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(SETS_LIMIT) });
      if (project) params.set('project', project);
      return apiFetch(`/v1/preview/eval-sets?${params}`, evalSetListSchema, { signal });
    },
  });

export const evalExamplesQuery = (setId: string, cursor: string | null) =>
  queryOptions({
    queryKey: evalKeys.examples(setId, cursor),
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
    queryKey: evalKeys.runs(filter),
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
    queryKey: evalKeys.run(runId),
    queryFn: ({ signal }) => apiFetch(evalRunPath(runId), evalRunSchema, { signal }),
    refetchInterval: (query) => (query.state.data && isActiveRun(query.state.data.status) ? 1000 : false),
  });

/** A page of the per-example results; `query` is resultsQuery()'s string (limit, cursor, filter). */
export const evalResultsQuery = (runId: string, query: string, live: boolean) =>
  queryOptions({
    queryKey: evalKeys.results(runId, query),
    queryFn: ({ signal }) => apiFetch(`${evalRunPath(runId)}/results?${query}`, resultListSchema, { signal }),
    // While the run is open, rows fill in as targets answer.
    refetchInterval: live ? 3000 : false,
  });

export const autoEvalQuery = (modelId: string) =>
  queryOptions({
    queryKey: evalKeys.autoEval(modelId),
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
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [...evalKeys.all(), 'sets'] }),
  });
}

/** Deletes one version of an eval set with its finished runs; the server answers 409 while a run still uses it. */
export function useDeleteEvalSet() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (setId: string) =>
      apiFetch(`/v1/preview/eval-sets/${encodeURIComponent(setId)}`, z.undefined(), { method: 'DELETE' }),
    // Its runs went with it: the run lists change too.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: evalKeys.all() }),
  });
}

export function useStartEvalRun() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RunBody) => apiFetch('/v1/preview/eval-runs', evalRunSchema, { method: 'POST', json: body }),
    onSuccess: (run) => {
      queryClient.setQueryData(evalKeys.run(run.id), run);
      return queryClient.invalidateQueries({ queryKey: [...evalKeys.all(), 'runs'] });
    },
  });
}

export function useCancelEvalRun(runId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(`${evalRunPath(runId)}/cancel`, evalRunSchema, { method: 'POST' }),
    onSuccess: (run) => {
      queryClient.setQueryData(evalKeys.run(runId), run);
      return queryClient.invalidateQueries({ queryKey: [...evalKeys.all(), 'runs'] });
    },
  });
}

export function useSetAutoEval(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (autoEval: EvalSettings | null) =>
      apiFetch(`${modelPath(modelId)}/auto-eval`, autoEvalSchema, { method: 'PUT', json: autoEval }),
    onSuccess: (data) => {
      queryClient.setQueryData(evalKeys.autoEval(modelId), data);
    },
  });
}
