'use client';

import { useQueryClient, type InfiniteData } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { ModelTinkerDto } from '@/lib/schemas/tinker-clients';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { isTerminalStatus, pollDelay } from '../runs/poll-backoff';
import { checkpointKeys } from '../queries/checkpoints';
import { historyKeys } from '../queries/history';
import { jobKeys } from '../queries/jobs';
import { modelKeys } from '../queries/models';
import { tinkerKeys } from '../queries/tinker';
import { trajectoryKeys } from '../queries/trajectories';
import { isLiveClient } from '../tinker/tinker-clients';

/** With no job open, a model changes only when someone starts one: check every 5 s, backing off to 30 s. */
const IDLE_MIN_MS = 5_000;
const IDLE_MAX_MS = 30_000;

export function idleDelay(unchangedPolls: number): number {
  return Math.min(IDLE_MAX_MS, Math.round(IDLE_MIN_MS * 1.5 ** Math.max(0, unchangedPolls)));
}

/**
 * What the page shows that a new job, step or checkpoint changes; equal signatures mean nothing to redraw. A Tinker
 * training client's optim steps move its training curve without a new checkpoint.
 */
export function liveSignature(
  model: ModelSummaryDto | undefined,
  jobs: readonly TrainingJobDto[],
  tinker: ModelTinkerDto | null | undefined = null,
): string {
  return JSON.stringify([
    model?.latest_step ?? null,
    model?.checkpoint_count ?? null,
    jobs.map((j) => [j.id, j.status, j.completed_steps, j.num_sequences]),
    tinker ? [tinker.training_client.optim_steps, tinker.training_client.status, tinker.saved.length] : null,
  ]);
}

/**
 * Whether the page follows closely (1–5 s): a job is queued or running, or a Tinker training client is live. A live
 * training client may sit idle between a script's calls, so its polls back off like a long job step's.
 */
export function isActive(jobs: readonly TrainingJobDto[], tinker: ModelTinkerDto | null | undefined): boolean {
  return jobs.some((j) => !isTerminalStatus(j.status)) || (tinker ? isLiveClient(tinker.training_client) : false);
}

/**
 * Keeps the model page live without a reload: polls the model and its job list (1–5 s while a job is queued or
 * running, like the job page; 5–30 s otherwise, for jobs started from the API), and a Tinker training client's state
 * (the model page's card: its requests move on every call) when the model is one; when anything changed it
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
        .getQueryData<InfiniteData<{ data: TrainingJobDto[] }>>(jobKeys.ofModel(modelId))
        ?.pages.flatMap((p) => p.data) ?? [];
    const modelOf = () => queryClient.getQueryData<ModelSummaryDto>(modelKeys.summary(modelId));
    // null: not a training client (the page's prefetch said so); it never becomes one, so it is not asked again.
    const tinkerOf = () => queryClient.getQueryData<ModelTinkerDto | null>(tinkerKeys.ofModel(modelId));
    let last = liveSignature(modelOf(), jobsOf(), tinkerOf());

    const schedule = () => {
      if (stopped) return;
      const open = isActive(jobsOf(), tinkerOf());
      timer = setTimeout(tick, open ? pollDelay(unchanged) : idleDelay(unchanged));
    };
    async function tick() {
      if (document.visibilityState === 'hidden') return schedule();
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: modelKeys.summary(modelId) }),
        queryClient.invalidateQueries({ queryKey: jobKeys.ofModel(modelId) }),
        tinkerOf() && isLiveClient(tinkerOf()!.training_client)
          ? queryClient.invalidateQueries({ queryKey: tinkerKeys.ofModel(modelId) })
          : Promise.resolve(),
      ]).catch(() => undefined);
      const next = liveSignature(modelOf(), jobsOf(), tinkerOf());
      if (next !== last) {
        last = next;
        unchanged = 0;
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: historyKeys.all(modelId) }),
          queryClient.invalidateQueries({ queryKey: checkpointKeys.all(modelId) }),
          queryClient.invalidateQueries({ queryKey: trajectoryKeys.steps(modelId) }),
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
