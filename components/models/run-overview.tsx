'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { RewardHackingCard, RunSummaryStrip } from '@/components/models/run-summary';
import {
  checkpointMetricKeys,
  defaultBestMetric,
  metricDirection,
  selectBestCheckpoint,
} from '@/lib/client/best-checkpoint';
import { isTerminalStatus } from '@/lib/client/poll-backoff';
import { detectRewardHacking, jobOutcome, runVerdict } from '@/lib/client/rl-guardrails';
import { hrefWithEntity } from '@/lib/client/entity';
import { allCheckpointsQuery, historyQuery, modelJobsInfiniteQuery } from '@/lib/client/query-keys';
import type { ModelSummaryDto } from '@/lib/schemas/models';

/** The top of the model page: the summary strip (is the run improving, stalled or hacked?) and the reward-hacking card. */
export function RunOverview({
  model,
  entity,
  defaultEntity,
  onOpenTrajectories,
}: {
  model: ModelSummaryDto;
  entity: string;
  defaultEntity: string;
  onOpenTrajectories: (step: number, split: string, compareWith: number) => void;
}) {
  const history = useQuery(historyQuery(model.id));
  const all = useQuery(allCheckpointsQuery(model.id));
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const series = useMemo(() => history.data?.series ?? [], [history.data]);
  const signals = useMemo(() => detectRewardHacking(series), [series]);
  const checkpoints = all.data?.data;
  const metricsByStep = useMemo(() => new Map((checkpoints ?? []).map((c) => [c.step, c.metrics])), [checkpoints]);
  const rows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const job = rows.find((j) => !isTerminalStatus(j.status)) ?? rows[0] ?? null;
  const outcomeOf = (j: (typeof rows)[number]) => jobOutcome(j, j.step === null ? null : metricsByStep.get(j.step));
  const newestRl = rows.find((j) => j.type === 'rl' && isTerminalStatus(j.status));
  const verdict = runVerdict(series, newestRl ? outcomeOf(newestRl) : null, signals);
  const keys = checkpointMetricKeys(checkpoints ?? []);
  const metric = defaultBestMetric(keys);
  const direction = metric ? metricDirection(metric) : 'max';
  const bestCheckpoint = metric && checkpoints ? selectBestCheckpoint(checkpoints, metric, direction) : null;

  return (
    <>
      <RunSummaryStrip
        verdict={verdict}
        best={bestCheckpoint && metric ? { checkpoint: bestCheckpoint, metric, direction } : null}
        series={series}
        job={job}
        jobOutcome={job ? outcomeOf(job) : undefined}
        jobHref={(j) => hrefWithEntity(`/jobs/${j.id}`, entity, defaultEntity)}
      />
      <RewardHackingCard signals={signals} onOpenTrajectories={onOpenTrajectories} />
    </>
  );
}
