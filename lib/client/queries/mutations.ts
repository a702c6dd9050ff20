'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { z } from 'zod';
import { abVoteCreatedSchema, type AbWinner } from '@/lib/schemas/ab-votes';
import {
  addMemberBodySchema,
  apiKeySchema,
  createApiKeyBodySchema,
  createdApiKeySchema,
  createTeamBodySchema,
  memberRemovedSchema,
  sessionSchema,
  signInBodySchema,
  teamSchema,
  type SignUpBody,
  type TeamDto,
} from '@/lib/schemas/accounts';
import { deleteCheckpointsResponseSchema } from '@/lib/schemas/checkpoints';
import {
  deleteModelResponseSchema,
  modelSchema,
  type CreateModelBody,
  type ModelSummaryDto,
} from '@/lib/schemas/models';
import { jobCreatedSchema, trainingJobSchema, type sftConfigSchema } from '@/lib/schemas/training-jobs';
import { apiFetch } from '../api/api-fetch';
import { abVoteKeys } from './ab-votes';
import { accountKeys } from './accounts';
import { datasetKeys } from './datasets';
import { jobKeys } from './jobs';
import { modelKeys, projectKeys } from './models';
import { uploadDataset } from '../api/upload-dataset';

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
        queryClient.invalidateQueries({ queryKey: modelKeys.all() }),
        queryClient.invalidateQueries({ queryKey: projectKeys.all() }),
      ]),
  });
}

export function useDeleteModel(modelId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(modelPath(modelId), deleteModelResponseSchema, { method: 'DELETE' }),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: modelKeys.detail(modelId) });
      await queryClient.invalidateQueries({ queryKey: modelKeys.lists() });
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
        queryClient.invalidateQueries({ queryKey: modelKeys.detail(modelId) }),
        queryClient.invalidateQueries({ queryKey: modelKeys.lists() }),
      ]),
  });
}

export function useCancelJob(jobId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(`/v1/preview/training-jobs/${jobId}/cancel`, trainingJobSchema, { method: 'POST' }),
    onSuccess: async (updated) => {
      queryClient.setQueryData(jobKeys.summary(jobId), updated);
      await queryClient.invalidateQueries({ queryKey: jobKeys.detail(jobId) });
      if (updated.model_id) await queryClient.invalidateQueries({ queryKey: modelKeys.detail(updated.model_id) });
    },
  });
}

/** A failed job run again as a new job (same data and settings); the caller opens the new job. */
export function useResubmitJob(jobId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiFetch(`/v1/preview/training-jobs/${jobId}/resubmit`, trainingJobSchema, { method: 'POST' }),
    onSuccess: async (created) => {
      queryClient.setQueryData(jobKeys.summary(created.id), created);
      await queryClient.invalidateQueries({ queryKey: modelKeys.detail(created.model_id) });
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
    onSuccess: () => queryClient.invalidateQueries({ queryKey: abVoteKeys.all(modelId) }),
  });
}

/*
 * The session. Signing in or up changes whose data every cached answer is: the cache starts over. (Signing out is
 * the shell's own: components/shell/sign-out-button.tsx.)
 */

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: z.infer<typeof signInBodySchema>) =>
      apiFetch('/v1/auth/sign-in', sessionSchema, { method: 'POST', json: body }),
    onSuccess: (session) => {
      // Whatever a previous user left in the cache is not this user's.
      queryClient.clear();
      queryClient.setQueryData(accountKeys.session(), session);
    },
  });
}

export function useSignUp() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SignUpBody) => apiFetch('/v1/auth/sign-up', sessionSchema, { method: 'POST', json: body }),
    onSuccess: (session) => {
      queryClient.clear();
      queryClient.setQueryData(accountKeys.session(), session);
    },
  });
}

/* API keys. */

export function useCreateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: z.infer<typeof createApiKeyBodySchema>) =>
      apiFetch('/v1/api-keys', createdApiKeySchema, { method: 'POST', json: body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accountKeys.apiKeys.all() }),
  });
}

export function useRevokeApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (keyId: string) =>
      apiFetch(`/v1/api-keys/${encodeURIComponent(keyId)}`, apiKeySchema, { method: 'DELETE' }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accountKeys.apiKeys.all() }),
  });
}

/* Teams. */

const teamPath = (team: string) => `/v1/teams/${encodeURIComponent(team)}`;

/**
 * After the user's own memberships change (a team created, a team left): the teams list, the session's entities,
 * and the server-rendered shell, whose entity switcher lists them too.
 */
function useMembershipRefresh() {
  const queryClient = useQueryClient();
  const router = useRouter();
  return async () => {
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: accountKeys.teams.all() }),
      queryClient.invalidateQueries({ queryKey: accountKeys.session() }),
    ]);
    router.refresh();
  };
}

export function useCreateTeam() {
  const refresh = useMembershipRefresh();
  return useMutation({
    mutationFn: (body: z.infer<typeof createTeamBodySchema>) =>
      apiFetch('/v1/teams', teamSchema, { method: 'POST', json: body }),
    onSuccess: refresh,
  });
}

export function useAddTeamMember() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ team, body }: { team: string; body: z.input<typeof addMemberBodySchema> }) =>
      apiFetch(`${teamPath(team)}/members`, teamSchema, { method: 'POST', json: body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: accountKeys.teams.all() }),
  });
}

/** Removes a member, or (the user's own row) leaves the team, which changes the user's entities too. */
export function useRemoveTeamMember(currentUserId: string) {
  const queryClient = useQueryClient();
  const refresh = useMembershipRefresh();
  return useMutation({
    mutationFn: ({ team, member }: { team: string; member: TeamDto['members'][number] }) =>
      apiFetch(`${teamPath(team)}/members/${encodeURIComponent(member.user_id)}`, memberRemovedSchema, {
        method: 'DELETE',
      }),
    onSuccess: (_removed, { member }) =>
      member.user_id === currentUserId
        ? refresh()
        : queryClient.invalidateQueries({ queryKey: accountKeys.teams.all() }),
  });
}

/* SFT jobs. */

export interface SftLaunch {
  model: ModelSummaryDto;
  file: File;
  datasetName: string;
  config: z.input<typeof sftConfigSchema>;
  /** Evaluate each new checkpoint on an eval set: the job's `eval`, which sets the model's auto-eval. */
  evaluate?: { eval_set_id: string; scorers: Record<string, unknown>[] } | null;
}

/**
 * Uploads the dataset, then starts the job on it: two calls. `step` says which one is under way, or which one
 * failed: a rejected file is not a rejected job, and after a failed job the dataset is stored all the same.
 */
export function useLaunchSftJob() {
  const queryClient = useQueryClient();
  const [step, setStep] = useState<'upload' | 'job'>('upload');
  const mutation = useMutation({
    mutationFn: async ({ model, file, datasetName, config, evaluate }: SftLaunch) => {
      setStep('upload');
      const dataset = await uploadDataset({ entity: model.entity, project: model.project, name: datasetName }, file);
      setStep('job');
      return apiFetch('/v1/preview/sft-training-jobs', jobCreatedSchema, {
        method: 'POST',
        json: {
          model_id: model.id,
          training_data_url: dataset.training_data_url,
          config,
          ...(evaluate ? { eval: evaluate } : {}),
        },
      });
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: modelKeys.all() }),
    // Also when the job was refused: its dataset is stored all the same.
    onSettled: () => queryClient.invalidateQueries({ queryKey: datasetKeys.all() }),
  });
  return { ...mutation, step };
}
