'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { ConstantsRow } from '@/components/charts/constants-row';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Skeleton } from '@/components/ui/skeleton';
import { groupSeriesIntoCharts, type ChartSpec } from '@/lib/client/charts/chart-series';
import { effectiveSmoothing, MIN_POINTS_TO_SMOOTH, sectionCharts } from '@/lib/client/charts/chart-sections';
import { historyQuery } from '@/lib/client/queries/history';
import type { ModelSummaryDto } from '@/lib/schemas/models';

/** The splits of a chart that have a point at `step`: where a click on that step can have landed. */
function splitsAt(chart: ChartSpec, step: number): string[] {
  return chart.series.filter((s) => s.points.some((p) => p.step === step && p.value !== null)).map((s) => s.split);
}

const noMetrics = (
  <EmptyState
    title="No metrics yet"
    description="Each training job adds a point per metric when it finishes: fine-tune this model with the Fine-tune button above, or log trajectories and train from a client (POST …/log, POST /v1/preview/training-jobs)."
  />
);

/**
 * Whether the history will most likely be empty: the model was never trained past step 0 and no checkpoint holds a
 * metric. The placeholder then takes the empty state's place instead of two charts', so the checkpoint table below
 * does not jump up when the history arrives (on a slow machine it moved from under the pointer mid-hover). A client
 * that logs metrics at step 0 without training gets the shorter placeholder and its charts push the page down, as
 * they would anyway for a run with more than two charts.
 */
function likelyEmpty(model: ModelSummaryDto): boolean {
  return (model.latest_step ?? 0) === 0 && model.best_metric === null;
}

/** The run's metrics, one point per checkpoint step, in Reward, Policy health and Data sections; a reward point opens its trajectories. */
export function MetricsSection({
  model,
  onRewardStepClick,
  tinker = false,
}: {
  model: ModelSummaryDto;
  onRewardStepClick: (step: number, split: string | undefined) => void;
  /** The model is a Tinker training client, whose checkpoints carry copies of the training curve's train metrics. */
  tinker?: boolean;
}) {
  const history = useQuery(historyQuery(model.id));
  const [smoothing, setSmoothing] = useState(0.6);
  const [logScale, setLogScale] = useState(false);
  const charts = useMemo(() => groupSeriesIntoCharts(history.data?.series ?? [], history.data?.bands), [history.data]);
  const sections = useMemo(() => sectionCharts(charts), [charts]);
  // A training client's sampler saves copy the train metrics of the optim step before them (train/*): the training
  // curve has those numbers at every step, so this section shows only what the client logged of its own (val/…).
  if (tinker && (history.isPending || history.data?.series.every((s) => s.name.startsWith('train/')))) return null;

  function clickReward(chart: ChartSpec, step: number, nearest: string | undefined) {
    // The split of the point clicked, so that a val point opens val trajectories, never "All splits": the series
    // drawn nearest the pointer, else the only split with a point at that step.
    const candidates = splitsAt(chart, step);
    const split = nearest !== undefined && candidates.includes(nearest) ? nearest : candidates[0];
    onRewardStepClick(step, split);
  }

  return (
    <section aria-labelledby="metrics-title" className="flex flex-col gap-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="metrics-title" className="text-[15px] font-semibold text-fg">
            Metrics
          </h2>
          <p className="mt-0.5 text-sm text-fg-muted">
            Every logged {'{split}/{metric}'} of the run, by step. Drag the handles under a chart to zoom. Series of
            fewer than {MIN_POINTS_TO_SMOOTH} points are drawn unsmoothed.
          </p>
        </div>
        {charts.length > 0 ? (
          <ChartControls
            smoothing={smoothing}
            onSmoothingChange={setSmoothing}
            logScale={logScale}
            onLogScaleChange={setLogScale}
          />
        ) : null}
      </div>
      {history.isPending ? (
        likelyEmpty(model) ? (
          // The empty state itself, hidden under a pulse: the same height at every width, so nothing below moves when
          // the history comes.
          <Card aria-hidden="true">
            <div className="invisible">{noMetrics}</div>
            <Skeleton className="absolute inset-4" />
          </Card>
        ) : (
          <div className="grid gap-4 lg:grid-cols-2">
            <Skeleton className="h-72" />
            <Skeleton className="h-72" />
          </div>
        )
      ) : history.isError ? (
        <RetryAlert title="Could not load the metric history" onRetry={() => history.refetch()}>
          {history.error.message}
        </RetryAlert>
      ) : charts.length === 0 ? (
        <Card>{noMetrics}</Card>
      ) : (
        <div className="flex flex-col gap-6" data-testid="metric-charts">
          {sections.map((section) => (
            <section
              key={section.id}
              aria-labelledby={`metrics-${section.id}`}
              className="flex flex-col gap-3"
              data-testid={`metric-section-${section.id}`}
            >
              <div>
                <h3 id={`metrics-${section.id}`} className="text-sm font-semibold text-fg">
                  {section.title}
                </h3>
                <p className="text-xs text-fg-muted">{section.description}</p>
              </div>
              <ConstantsRow constants={section.constants} />
              {section.charts.length > 0 ? (
                <div className="grid gap-4 lg:grid-cols-2">
                  {section.charts.map((chart) => (
                    <MetricChartCard
                      key={chart.metric}
                      chart={chart}
                      smoothing={effectiveSmoothing(chart, smoothing)}
                      logScale={logScale}
                      filePrefix={model.name}
                      modelId={model.id}
                      onStepClick={
                        chart.metric === 'reward' ? (step, near) => clickReward(chart, step, near) : undefined
                      }
                      stepClickHint={chart.metric === 'reward' ? 'Click a point to see its trajectories' : undefined}
                    />
                  ))}
                </div>
              ) : null}
            </section>
          ))}
        </div>
      )}
    </section>
  );
}
