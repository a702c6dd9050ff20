'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useMemo, useState } from 'react';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import type { ChartMarker } from '@/components/charts/metric-chart';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { ConstantsRow } from '@/components/charts/constants-row';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Skeleton } from '@/components/ui/skeleton';
import { effectiveSmoothing, foldConstants, MIN_POINTS_TO_SMOOTH } from '@/lib/client/charts/chart-sections';
import { trainingCurveCharts } from '@/lib/client/charts/job-events';
import { allCheckpointsQuery } from '@/lib/client/queries/checkpoints';
import { trainingCurveQuery } from '@/lib/client/queries/history';
import { modelJobsInfiniteQuery } from '@/lib/client/queries/jobs';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { ModelTinkerDto } from '@/lib/schemas/tinker-clients';
import type { HistorySegment } from '@/lib/schemas/trajectories';

// Drawn when a flag is chosen: its code loads then, off the model page's first-load budget (bench:ui).
const SelectedCheckpoint = dynamic(
  () => import('@/components/models/selected-checkpoint').then((m) => m.SelectedCheckpoint),
  { ssr: false },
);

/** More flags than this crowd a chart's top edge into one smear: they are thinned to about this many. */
const MAX_FLAGS = 30;

interface TrainingCurveSectionProps {
  model: ModelSummaryDto;
  jobHrefFor: (jobId: string) => string;
  playgroundHrefFor: (step: number) => string;
  fineTuneHrefFor: (step: number) => string;
  /** The model's Tinker training client, when it is one: its optim steps are the curve, its sampler saves the flags. */
  tinker?: ModelTinkerDto | null;
}

/** A flag's checkpoint: where on the curve it sits and what made it. */
interface CurveCheckpoint {
  step: number;
  x: number;
  /** The job that ended in it, for a job's checkpoint. */
  segment: HistorySegment | null;
  /** The sampler save that made it, for a Tinker training client's checkpoint. */
  saveName: string | null;
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
  tinker = null,
}: TrainingCurveSectionProps) {
  const curve = useQuery(trainingCurveQuery(model.id));
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const all = useQuery({ ...allCheckpointsQuery(model.id), enabled: tinker !== null });
  const [smoothing, setSmoothing] = useState(0.6);
  const [logScale, setLogScale] = useState(false);
  const [selected, setSelected] = useState<number | null>(null);
  const { charts, constants } = useMemo(
    () => foldConstants(trainingCurveCharts(curve.data?.series ?? [])),
    [curve.data],
  );
  const segments = useMemo(() => curve.data?.segments ?? [], [curve.data]);
  // A Tinker training client's curve has no jobs: x is its optim step, and each sampler save (a checkpoint, whose
  // train/optim_steps says after which step it was taken) is a flag. A model trained by jobs keeps its jobs' flags.
  const bySteps = tinker !== null && segments.length === 0;
  const ended = useMemo<CurveCheckpoint[]>(() => {
    if (!bySteps) {
      return segments
        .filter((s) => s.checkpoint_step !== null)
        .map((s) => ({ step: s.checkpoint_step!, x: s.last_x, segment: s, saveName: null }));
    }
    const saves = new Map(
      (tinker?.saved ?? []).flatMap((w) => (w.kind === 'sampler' && w.step !== null ? [[w.step, w.name]] : [])),
    );
    return (all.data?.data ?? [])
      .flatMap((c) => {
        const x = c.metrics['train/optim_steps'];
        return typeof x === 'number' && x > 0
          ? [{ step: c.step, x, segment: null, saveName: saves.get(c.step) ?? null }]
          : [];
      })
      .sort((a, b) => a.x - b.x || a.step - b.step);
  }, [bySteps, segments, tinker, all.data]);
  const chosen = ended.find((s) => s.step === selected) ?? null;

  const markers = useMemo<ChartMarker[]>(() => {
    const every = Math.ceil(ended.length / MAX_FLAGS);
    return ended
      .filter((s, i) => i % every === (ended.length - 1) % every || s.step === selected)
      .map((s) => {
        const step = s.step;
        return {
          x: s.x,
          label: String(step),
          name: `Checkpoint step ${step}`,
          selected: step === selected,
          onSelect: () => setSelected((current) => (current === step ? null : step)),
        };
      });
  }, [ended, selected]);

  // A model without jobs has no curve (unless it is a training client that took an optim step), and the page already
  // holds its jobs and training client (hydrated with it): no placeholder, which would vanish when the curve comes
  // and pull the checkpoint table up under the pointer.
  if (curve.isPending) {
    const none = jobs.data?.pages[0]?.data.length === 0 && (tinker?.training_client.optim_steps ?? 0) === 0;
    return none ? null : <Skeleton className="h-72" />;
  }
  if (curve.isError) {
    return (
      <RetryAlert title="Could not load the training curve" onRetry={() => curve.refetch()}>
        {curve.error.message}
      </RetryAlert>
    );
  }
  // Nothing has trained yet: the Metrics section above already says how to start.
  if ((segments.length === 0 && !bySteps) || charts.length + constants.length === 0) return null;
  const total = bySteps
    ? Math.max(0, ...(curve.data?.series ?? []).map((s) => s.points.at(-1)?.[0] ?? 0))
    : segments.at(-1)!.last_x;
  const thinned = markers.length < ended.length;
  const shownOf = thinned ? ` (${markers.length} of ${ended.length} shown)` : '';

  return (
    <section aria-labelledby="curve-title" className="flex flex-col gap-4" data-testid="training-curve">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="curve-title" className="text-[15px] font-semibold text-fg">
            Training curve
          </h2>
          {bySteps ? (
            <p className="mt-0.5 max-w-3xl text-sm text-fg-muted">
              All {total.toLocaleString('en')} optim steps of the Tinker training client (loss: the mean over trainable
              tokens, by their weights). A flag marks each sampler save{shownOf}; choose one to see its checkpoint.
              Curves of fewer than {MIN_POINTS_TO_SMOOTH} points are drawn unsmoothed.
            </p>
          ) : (
            <p className="mt-0.5 max-w-3xl text-sm text-fg-muted">
              All {total.toLocaleString('en')} gradient steps of {segments.length} job
              {segments.length === 1 ? '' : 's'} on one axis, in the order they trained. A flag marks the checkpoint a
              job ended in
              {shownOf}; choose one to see it. Curves of fewer than {MIN_POINTS_TO_SMOOTH} points are drawn unsmoothed.
            </p>
          )}
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
          step={chosen.step}
          origin={
            chosen.segment ? (
              <>
                from the {chosen.segment.type.toUpperCase()} job{' '}
                <Link href={jobHrefFor(chosen.segment.job_id)} className="font-mono text-accent-text hover:underline">
                  {chosen.segment.job_id.slice(0, 8)}
                </Link>
                , gradient steps {chosen.segment.first_x.toLocaleString('en')}–
                {chosen.segment.last_x.toLocaleString('en')}
              </>
            ) : (
              <>
                {chosen.saveName ? (
                  <>
                    sampler weights <span className="font-mono text-fg">{chosen.saveName}</span>,{' '}
                  </>
                ) : null}
                saved after optim step {chosen.x.toLocaleString('en')}
              </>
            )
          }
          playgroundHref={playgroundHrefFor(chosen.step)}
          fineTuneHref={fineTuneHrefFor(chosen.step)}
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
            xLabel={bySteps ? 'Optim step' : 'Gradient step'}
            markers={markers}
          />
        ))}
      </div>
    </section>
  );
}
