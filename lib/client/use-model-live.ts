'use client';

import { useQueryClient, type InfiniteData } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { isTerminalStatus, pollDelay } from './poll-backoff';
import { queryKeys } from './query-keys';

/** With no job open, a model changes only when someone starts one: check every 5 s, backing off to 30 s. */
const IDLE_MIN_MS = 5_000;
const IDLE_MAX_MS = 30_000;

export function idleDelay(unchangedPolls: number): number {
  return Math.min(IDLE_MAX_MS, Math.round(IDLE_MIN_MS * 1.5 ** Math.max(0, unchangedPolls)));
}

/** What the page shows that a new job, step or checkpoint changes; equal signatures mean nothing to redraw. */
export function liveSignature(model: ModelSummaryDto | undefined, jobs: readonly TrainingJobDto[]): string {
  return JSON.stringify([
    model?.latest_step ?? null,
    model?.checkpoint_count ?? null,
    jobs.map((j) => [j.id, j.status, j.completed_steps, j.num_sequences]),
  ]);
}

/**
 * Keeps the model page live without a reload: polls the model and its job list (1–5 s while a job is queued or
 * running, like the job page; 5–30 s otherwise, for jobs started from the API), and when anything changed
 * refetches the history, checkpoints and trajectory steps. Paused while the tab is hidden.
 */
export function useModelLive(modelId: string) {
  const queryClient = useQueryClient();
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let unchanged = 0;
    let stopped = false;
    const jobsOf = () =>
      queryClient
        .getQueryData<InfiniteData<{ data: TrainingJobDto[] }>>(queryKeys.model.jobs(modelId))
        ?.pages.flatMap((p) => p.data) ?? [];
    const modelOf = () => queryClient.getQueryData<ModelSummaryDto>(queryKeys.model.summary(modelId));
    let last = liveSignature(modelOf(), jobsOf());

    const schedule = () => {
      if (stopped) return;
      const open = jobsOf().some((j) => !isTerminalStatus(j.status));
      timer = setTimeout(tick, open ? pollDelay(unchanged) : idleDelay(unchanged));
    };
    async function tick() {
      if (document.visibilityState === 'hidden') return schedule();
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.model.summary(modelId) }),
        queryClient.invalidateQueries({ queryKey: queryKeys.model.jobs(modelId) }),
      ]).catch(() => undefined);
      const next = liveSignature(modelOf(), jobsOf());
      if (next !== last) {
        last = next;
        unchanged = 0;
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: queryKeys.model.history(modelId) }),
          queryClient.invalidateQueries({ queryKey: queryKeys.model.checkpoints(modelId) }),
          queryClient.invalidateQueries({ queryKey: queryKeys.model.trajectorySteps(modelId) }),
        ]).catch(() => undefined);
      } else unchanged += 1;
      schedule();
    }
    schedule();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [queryClient, modelId]);
}
