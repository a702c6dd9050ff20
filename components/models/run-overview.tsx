'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import dynamic from 'next/dynamic';
import { RunSummaryStrip } from '@/components/models/run-summary';
import {
  bestTie,
  checkpointMetricKeys,
  defaultBestMetric,
  metricDirection,
  selectBestCheckpoint,
} from '@/lib/client/runs/best-checkpoint';
import { isTerminalStatus } from '@/lib/client/runs/poll-backoff';
import { detectRewardHacking, jobOutcome, lengthCappedSignals, runVerdict } from '@/lib/client/runs/rl-guardrails';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { allCheckpointsQuery } from '@/lib/client/queries/checkpoints';
import { historyQuery, trainingCurveQuery } from '@/lib/client/queries/history';
import { modelJobsInfiniteQuery } from '@/lib/client/queries/jobs';
import { isLiveClient, tinkerRunVerdict } from '@/lib/client/tinker/tinker-clients';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { ModelTinkerDto } from '@/lib/schemas/tinker-clients';

// Drawn only when the history (fetched in the browser) shows a signal, so never in the server's HTML: its code loads
// after hydration, off the model page's first-load budget (bench:ui).
const RewardHackingCard = dynamic(
  () => import('@/components/models/reward-hacking-card').then((m) => m.RewardHackingCard),
  { ssr: false },
);

/** The top of the model page: the summary strip (is the run improving, stalled or hacked?) and the reward-hacking card. */
export function RunOverview({
  model,
  entity,
  defaultEntity,
  onOpenTrajectories,
  tinker = null,
}: {
  model: ModelSummaryDto;
  entity: string;
  defaultEntity: string;
  onOpenTrajectories: (step: number, split: string, compareWith: number) => void;
  /** The model's Tinker training client, when it is one: its verdict is read from the training curve. */
  tinker?: ModelTinkerDto | null;
}) {
  const history = useQuery(historyQuery(model.id));
  // The same query the training curve section makes: one request for both. The verdict reads it: an SFT job's trend
  // is its per-gradient-step loss, not the one mean per job its checkpoint holds.
  const curve = useQuery(trainingCurveQuery(model.id));
  const all = useQuery(allCheckpointsQuery(model.id));
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const series = useMemo(() => history.data?.series ?? [], [history.data]);
  // The server's own reading of the stored completions first (it needs no metric named for length), then what the
  // logged metrics show.
  const signals = useMemo(
    () => [...lengthCappedSignals(history.data?.length_pinning ?? []), ...detectRewardHacking(series)],
    [history.data, series],
  );
  const checkpoints = all.data?.data;
  const metricsByStep = useMemo(() => new Map((checkpoints ?? []).map((c) => [c.step, c.metrics])), [checkpoints]);
  const rows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const job = rows.find((j) => !isTerminalStatus(j.status)) ?? rows[0] ?? null;
  const outcomeOf = (j: (typeof rows)[number]) => jobOutcome(j, j.step === null ? null : metricsByStep.get(j.step));
  const newestRl = rows.find((j) => j.type === 'rl' && isTerminalStatus(j.status));
  const verdict =
    tinker !== null && rows.length === 0
      ? tinkerRunVerdict(series, curve.data?.series ?? [], signals)
      : runVerdict(
          series,
          newestRl ? outcomeOf(newestRl) : null,
          signals,
          curve.isPending ? 'loading' : (curve.data ?? null),
        );
  // The fourth tile: the training client while it is live or when there is no job to show instead.
  const client = tinker && (rows.length === 0 || isLiveClient(tinker.training_client)) ? tinker.training_client : null;
  const keys = checkpointMetricKeys(checkpoints ?? []);
  const metric = defaultBestMetric(keys);
  const direction = metric ? metricDirection(metric) : 'max';
  const bestCheckpoint = metric && checkpoints ? selectBestCheckpoint(checkpoints, metric, direction) : null;
  const tie = metric && checkpoints ? bestTie(checkpoints, metric, bestCheckpoint) : null;

  return (
    <>
      <RunSummaryStrip
        verdict={verdict}
        best={bestCheckpoint && metric && tie ? { checkpoint: bestCheckpoint, metric, direction, tie } : null}
        series={series}
        job={job}
        jobOutcome={job ? outcomeOf(job) : undefined}
        jobHref={(j) => hrefWithEntity(`/jobs/${j.id}`, entity, defaultEntity)}
        tinkerClient={client}
        sftOnly={rows.length > 0 && rows.every((j) => j.type === 'sft')}
      />
      {signals.length > 0 ? <RewardHackingCard signals={signals} onOpenTrajectories={onOpenTrajectories} /> : null}
    </>
  );
}
