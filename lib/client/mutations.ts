'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { abVoteCreatedSchema, type AbWinner } from '@/lib/schemas/ab-votes';
import { deleteCheckpointsResponseSchema } from '@/lib/schemas/checkpoints';
import { deleteModelResponseSchema, modelSchema, type CreateModelBody } from '@/lib/schemas/models';
import { trainingJobSchema } from '@/lib/schemas/training-jobs';
import { apiFetch } from './api-fetch';
import { queryKeys } from './query-keys';

/*
 * The dashboard's writes, one hook per action, each with the caches it makes stale: a page adds only what is its
 * own (close a dialog, navigate) through mutate's callbacks, and no page has to know which lists another write
 * touches. The hook's onSuccess runs, and is awaited, before the caller's.
 */

const modelPath = (modelId: string) => `/v1/preview/models/${encodeURIComponent(modelId)}`;

export function useCreateModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreateModelBody) => apiFetch('/v1/preview/models', modelSchema, { method: 'POST', json: body }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.models.all() }),
        queryClient.invalidateQueries({ queryKey: queryKeys.projects.all() }),
      ]),
  });
}

export function useDeleteModel(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(modelPath(modelId), deleteModelResponseSchema, { method: 'DELETE' }),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: queryKeys.model.all(modelId) });
      await queryClient.invalidateQueries({ queryKey: queryKeys.models.lists() });
    },
  });
}

export function useDeleteCheckpoints(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (steps: number[]) =>
      apiFetch(`${modelPath(modelId)}/checkpoints`, deleteCheckpointsResponseSchema, {
        method: 'DELETE',
        json: { steps },
      }),
    // The model's own page (checkpoints, history, latest step) and every list that shows its latest step.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.model.all(modelId) }),
        queryClient.invalidateQueries({ queryKey: queryKeys.models.lists() }),
      ]),
  });
}

export function useCancelJob(jobId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(`/v1/preview/training-jobs/${jobId}/cancel`, trainingJobSchema, { method: 'POST' }),
    onSuccess: async (updated) => {
      queryClient.setQueryData(queryKeys.jobs.summary(jobId), updated);
      await queryClient.invalidateQueries({ queryKey: queryKeys.jobs.detail(jobId) });
      if (updated.model_id) await queryClient.invalidateQueries({ queryKey: queryKeys.model.all(updated.model_id) });
    },
  });
}

/** A blind A/B vote between two checkpoints (the playground's); the model page's tally follows. */
export function useAbVote(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (vote: { a: number; b: number; winner: AbWinner; prompt: string }) =>
      apiFetch(`${modelPath(modelId)}/ab-votes`, abVoteCreatedSchema, {
        method: 'POST',
        json: { a_step: vote.a, b_step: vote.b, winner: vote.winner, prompt: vote.prompt },
      }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.model.abVotes(modelId) }),
  });
}
