'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useMemo, useState } from 'react';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import type { ChartMarker } from '@/components/charts/metric-chart';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { ConstantsRow } from '@/components/charts/constants-row';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Skeleton } from '@/components/ui/skeleton';
import { effectiveSmoothing, foldConstants, MIN_POINTS_TO_SMOOTH } from '@/lib/client/chart-sections';
import { trainingCurveCharts } from '@/lib/client/job-events';
import { allCheckpointsQuery, modelJobsInfiniteQuery, trainingCurveQuery } from '@/lib/client/query-keys';
import { formatNumber } from '@/lib/client/trajectory-view';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { HistorySegment } from '@/lib/schemas/trajectories';

/** More flags than this crowd a chart's top edge into one smear: they are thinned to about this many. */
const MAX_FLAGS = 30;

interface TrainingCurveSectionProps {
  model: ModelSummaryDto;
  jobHrefFor: (jobId: string) => string;
  playgroundHrefFor: (step: number) => string;
  fineTuneHrefFor: (step: number) => string;
}

/**
 * The model's training curve: every job's gradient steps on one x-axis, in the order they trained, with a flag where
 * each job ended in a checkpoint. An 800-step SFT job is 800 points here, where the per-checkpoint charts above have
 * one. Choosing a flag shows that checkpoint: its job, its metrics and what to do with it.
 */
export function TrainingCurveSection({
  model,
  jobHrefFor,
  playgroundHrefFor,
  fineTuneHrefFor,
}: TrainingCurveSectionProps) {
  const curve = useQuery(trainingCurveQuery(model.id));
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const [smoothing, setSmoothing] = useState(0.6);
  const [logScale, setLogScale] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const { charts, constants } = useMemo(
    () => foldConstants(trainingCurveCharts(curve.data?.series ?? [])),
    [curve.data],
  );
  const segments = useMemo(() => curve.data?.segments ?? [], [curve.data]);
  const ended = useMemo(() => segments.filter((s) => s.checkpoint_step !== null), [segments]);
  const chosen = ended.find((s) => s.checkpoint_step === selected) ?? null;

  const markers = useMemo<ChartMarker[]>(() => {
    const every = Math.ceil(ended.length / MAX_FLAGS);
    return ended
      .filter((s, i) => i % every === (ended.length - 1) % every || s.checkpoint_step === selected)
      .map((s) => {
        const step = s.checkpoint_step!;
        return {
          x: s.last_x,
          label: String(step),
          name: `Checkpoint step ${step}`,
          selected: step === selected,
          onSelect: () => setSelected((current) => (current === step ? null : step)),
        };
      });
  }, [ended, selected]);

  // A model without jobs has no curve, and the page already holds its jobs (hydrated with it): no placeholder, which
  // would vanish when the curve comes and pull the checkpoint table up under the pointer.
  if (curve.isPending) return jobs.data?.pages[0]?.data.length === 0 ? null : <Skeleton className="h-72" />;
  if (curve.isError) {
    return (
      <RetryAlert title="Could not load the training curve" onRetry={() => curve.refetch()}>
        {curve.error.message}
      </RetryAlert>
    );
  }
  // Nothing has trained yet: the Metrics section above already says how to start.
  if (segments.length === 0 || charts.length + constants.length === 0) return null;
  const total = segments.at(-1)!.last_x;
  const thinned = markers.length < ended.length;

  return (
    <section aria-labelledby="curve-title" className="flex flex-col gap-4" data-testid="training-curve">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="curve-title" className="text-[15px] font-semibold text-fg">
            Training curve
          </h2>
          <p className="mt-0.5 max-w-3xl text-sm text-fg-muted">
            All {total.toLocaleString('en')} gradient steps of {segments.length} job{segments.length === 1 ? '' : 's'}{' '}
            on one axis, in the order they trained. A flag marks the checkpoint a job ended in
            {thinned ? ` (${markers.length} of ${ended.length} shown)` : ''}; choose one to see it. Curves of fewer than{' '}
            {MIN_POINTS_TO_SMOOTH} points are drawn unsmoothed.
          </p>
        </div>
        <ChartControls
          smoothing={smoothing}
          onSmoothingChange={setSmoothing}
          logScale={logScale}
          onLogScaleChange={setLogScale}
        />
      </div>
      {chosen ? (
        <SelectedCheckpoint
          model={model}
          segment={chosen}
          jobHref={jobHrefFor(chosen.job_id)}
          playgroundHref={playgroundHrefFor(chosen.checkpoint_step!)}
          fineTuneHref={fineTuneHrefFor(chosen.checkpoint_step!)}
          onClose={() => setSelected(null)}
        />
      ) : null}
      <ConstantsRow constants={constants} />
      <div className="grid gap-4 lg:grid-cols-2">
        {charts.map((chart) => (
          <MetricChartCard
            key={chart.metric}
            chart={chart}
            smoothing={effectiveSmoothing(chart, smoothing)}
            logScale={logScale}
            filePrefix={`${model.name}-gradient-steps`}
            modelId={model.id}
            axis="gradient_step"
            xLabel="Gradient step"
            markers={markers}
          />
        ))}
      </div>
    </section>
  );
}

function SelectedCheckpoint({
  model,
  segment,
  jobHref,
  playgroundHref,
  fineTuneHref,
  onClose,
}: {
  model: ModelSummaryDto;
  segment: HistorySegment;
  jobHref: string;
  playgroundHref: string;
  fineTuneHref: string;
  onClose: () => void;
}) {
  const all = useQuery(allCheckpointsQuery(model.id));
  const step = segment.checkpoint_step!;
  const checkpoint = all.data?.data.find((c) => c.step === step);
  // Held-out and logged figures first: they say how good the checkpoint is; train/* says how training went.
  const metrics = Object.entries(checkpoint?.metrics ?? {})
    .filter(([, v]) => typeof v === 'number')
    .sort(([a], [b]) => Number(a.startsWith('train/')) - Number(b.startsWith('train/')) || a.localeCompare(b))
    .slice(0, 8);
  return (
    <Card className="px-4 py-3" data-testid="curve-checkpoint" aria-live="polite">
      <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-2">
        <p className="text-sm text-fg">
          <span className="font-semibold">Step {step}</span>{' '}
          <span className="text-fg-muted">
            from the {segment.type.toUpperCase()} job{' '}
            <Link href={jobHref} className="font-mono text-accent-text hover:underline">
              {segment.job_id.slice(0, 8)}
            </Link>
            , gradient steps {segment.first_x.toLocaleString('en')}–{segment.last_x.toLocaleString('en')}
          </span>
          {checkpoint === undefined && all.isSuccess ? (
            <span className="text-fg-muted"> · this checkpoint was deleted</span>
          ) : null}
        </p>
        <div className="flex flex-wrap items-center gap-2">
          {checkpoint ? (
            <>
              <Link href={playgroundHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
                Open in the playground
              </Link>
              <Link href={fineTuneHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
                Fine-tune from step {step}
              </Link>
            </>
          ) : null}
          <button type="button" className="text-xs font-medium text-accent-text hover:underline" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      {metrics.length > 0 ? (
        <dl className="mt-2 flex flex-wrap gap-x-5 gap-y-1 text-xs">
          {metrics.map(([name, value]) => (
            <div key={name} className="flex gap-1.5">
              <dt className="font-mono text-fg-muted">{name}</dt>
              <dd className="text-fg tabular-nums">{formatNumber(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
    </Card>
  );
}
