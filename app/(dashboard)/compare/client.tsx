'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { useMemo, useState } from 'react';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { seriesColor } from '@/components/charts/chart-colors';
import { Badge, type BadgeTone } from '@/components/ui/badge';
import { Card } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { RetryAlert } from '@/components/ui/retry-alert';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { Skeleton } from '@/components/ui/skeleton';
import { apiFetch } from '@/lib/client/api/api-fetch';
import { formatDuration } from '@/lib/client/format/format-time';
import { compareCurvesQuery } from '@/lib/client/queries/compare';
import {
  AXIS_LABELS,
  axisGap,
  COMPARE_AXES,
  comparisonCharts,
  configRows,
  formatAxisValue,
  type RunCurve,
} from '@/lib/client/charts/run-comparison';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import { comparisonSchema, type CompareRun } from '@/lib/schemas/comparison';
import { compareQueryKey, compareSearchParsers, compareSelection } from './search-params';

const STATUS_TONE: Record<string, BadgeTone> = {
  COMPLETED: 'success',
  RUNNING: 'info',
  QUEUED: 'neutral',
  FAILED: 'danger',
};

/** A run's name in legends and the table: the model's, with its project where two runs share a name. */
function labels(runs: readonly CompareRun[]): string[] {
  return runs.map((r) => (runs.filter((o) => o.name === r.name).length > 1 ? `${r.project}/${r.name}` : r.name));
}

function formatConfig(value: string | number | boolean | null | undefined): string {
  if (value === undefined) return '—';
  if (value === null) return 'null';
  // As it was set (0.0005, not 5.000e-4): a setting is read against what was typed into the form.
  return String(value);
}

export function CompareClient() {
  const [{ models, project, entity, axis }, setUrl] = useQueryStates(compareSearchParsers, { history: 'replace' });
  const [smoothing, setSmoothing] = useState(0);
  const [logScale, setLogScale] = useState(false);
  const [allSettings, setAllSettings] = useState(false);

  const selection = compareSelection({ models, project, entity });
  const selected = selection !== null;
  const comparison = useQuery({
    queryKey: compareQueryKey(selection ?? {}),
    queryFn: ({ signal }) =>
      apiFetch(`/v1/preview/compare?${new URLSearchParams(selection ?? {}).toString()}`, comparisonSchema, { signal }),
    enabled: selected,
  });
  const runs = useMemo(() => comparison.data?.runs ?? [], [comparison.data]);
  // Every run's curve in one request (preloaded with the HTML): a browser opens six connections to a host at most.
  const ids = useMemo(() => runs.map((r) => r.model_id), [runs]);
  const histories = useQuery({ ...compareCurvesQuery(ids), enabled: ids.length > 0 });
  const names = useMemo(() => labels(runs), [runs]);
  const curves: RunCurve[] | null = useMemo(() => {
    const byModel = new Map(histories.data?.runs.map((h) => [h.model_id, h]));
    if (runs.length === 0 || runs.some((r) => !byModel.has(r.model_id))) return null;
    return runs.map((r, i) => {
      const h = byModel.get(r.model_id)!;
      return { label: names[i], series: h.series, axes: { marks: h.marks, segments: h.segments } };
    });
  }, [histories.data, runs, names]);
  const charts = useMemo(() => (curves ? comparisonCharts(curves, axis) : []), [curves, axis]);
  const gaps = curves
    ? curves.flatMap((c) => {
        const why = axisGap(axis, c.axes);
        return why ? [`${c.label}: ${why}`] : [];
      })
    : [];
  const formatX = useMemo(() => (x: number) => formatAxisValue(axis, x), [axis]);
  const rows = useMemo(
    () =>
      configRows(
        runs.map((r) => r.config),
        !allSettings,
      ),
    [runs, allSettings],
  );
  const metricNames = useMemo(() => [...new Set(runs.flatMap((r) => r.metrics.map((m) => m.name)))].sort(), [runs]);

  const description = (
    <>Two to eight runs on shared charts, with what differed between them. The address holds the selection: share it.</>
  );

  if (!selected)
    return (
      <>
        <PageHeader title="Compare runs" description={description} />
        <Card>
          <EmptyState
            title="Pick runs to compare"
            description="Tick two to eight models on the Models page and choose Compare, or compare a whole project from its filter there."
          >
            <Link href="/models" className="font-medium text-accent-text hover:underline">
              Go to Models
            </Link>
          </EmptyState>
        </Card>
      </>
    );

  return (
    <>
      <PageHeader
        title="Compare runs"
        description={
          project ? (
            <>
              Project <span className="font-medium text-fg">{project}</span>
              {comparison.data?.omitted ? ` (its 8 newest models; ${comparison.data.omitted} older left out)` : ''}.
            </>
          ) : (
            description
          )
        }
      />
      {comparison.isError ? (
        <RetryAlert title="Could not compare these runs" onRetry={() => comparison.refetch()}>
          {comparison.error.message}
        </RetryAlert>
      ) : comparison.isPending ? (
        <Card>
          <Skeleton className="h-48 w-full" />
        </Card>
      ) : (
        <div className="flex flex-col gap-6">
          <Card className="overflow-hidden">
            <div className="flex flex-wrap items-center justify-between gap-3 px-4 pt-3.5 pb-2">
              <h2 className="text-[15px] font-semibold text-fg">Runs</h2>
              <label className="inline-flex cursor-pointer items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={allSettings}
                  onChange={(e) => setAllSettings(e.target.checked)}
                  className="size-4 accent-[var(--tb-accent)]"
                  data-testid="compare-all-settings"
                />
                <span className="font-medium text-fg">All settings</span>
                <span className="text-fg-subtle">(else only those that differ)</span>
              </label>
            </div>
            <div className="overflow-x-auto" tabIndex={0} role="region" aria-label="Runs compared">
              <table className="w-full border-collapse text-sm" data-testid="compare-table">
                <caption className="sr-only">
                  Runs compared: status, duration, settings {allSettings ? '' : 'that differ '}and metrics (final and
                  best)
                </caption>
                <thead>
                  <tr className="border-b border-line">
                    <th scope="col" className="sticky left-0 bg-surface px-4 py-2 text-left font-medium text-fg-muted">
                      <span className="sr-only">Attribute</span>
                    </th>
                    {runs.map((r, i) => (
                      <th
                        key={r.model_id}
                        scope="col"
                        className="min-w-36 px-3 py-2 text-left align-bottom font-semibold text-fg"
                        data-testid="compare-run"
                      >
                        <span className="inline-flex items-center gap-1.5">
                          <span
                            aria-hidden="true"
                            className="h-0.5 w-3 shrink-0 rounded-full"
                            style={{ backgroundColor: seriesColor(i) }}
                          />
                          <Link href={`/models/${r.model_id}`} className="hover:text-accent-text hover:underline">
                            {names[i]}
                          </Link>
                        </span>
                        {!project ? (
                          <button
                            type="button"
                            className="ml-2 text-xs font-normal text-fg-subtle hover:text-danger-text"
                            aria-label={`Remove ${names[i]} from the comparison`}
                            onClick={() => void setUrl({ models: models.filter((id) => id !== r.model_id) })}
                          >
                            ×
                          </button>
                        ) : null}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  <Row label="Status">
                    {runs.map((r) => (
                      <td key={r.model_id} className="px-3 py-1.5">
                        {r.status ? (
                          <Badge tone={STATUS_TONE[r.status]}>{r.status.toLowerCase()}</Badge>
                        ) : (
                          <span className="text-fg-subtle">no jobs</span>
                        )}
                      </td>
                    ))}
                  </Row>
                  <Row label="Duration">
                    {runs.map((r) => (
                      <td key={r.model_id} className="px-3 py-1.5 tabular-nums">
                        {r.duration_s === null ? '—' : formatDuration(r.duration_s * 1000)}
                        {r.jobs > 1 ? <span className="text-fg-subtle"> · {r.jobs} jobs</span> : null}
                      </td>
                    ))}
                  </Row>
                  <Row label="Gradient steps">
                    {runs.map((r) => (
                      <td key={r.model_id} className="px-3 py-1.5 tabular-nums">
                        {r.gradient_steps.toLocaleString('en')}
                      </td>
                    ))}
                  </Row>
                  <SectionRow span={runs.length + 1}>
                    {allSettings ? 'Settings (differences marked)' : 'Settings that differ'}
                  </SectionRow>
                  {rows.length === 0 ? (
                    <tr>
                      <td colSpan={runs.length + 1} className="px-4 py-1.5 text-fg-subtle">
                        Every run has the same settings.
                      </td>
                    </tr>
                  ) : (
                    rows.map((row) => (
                      <Row
                        key={row.key}
                        label={row.key}
                        mono
                        differs={row.differs}
                        testId={row.differs ? 'config-diff' : 'config-same'}
                      >
                        {row.values.map((v, i) => (
                          <td
                            key={runs[i].model_id}
                            className={cx(
                              'max-w-56 truncate px-3 py-1.5 font-mono text-xs',
                              row.differs && 'bg-warning-soft text-warning-text',
                            )}
                            title={formatConfig(v)}
                          >
                            {formatConfig(v)}
                          </td>
                        ))}
                      </Row>
                    ))
                  )}
                  <SectionRow span={runs.length + 1}>Metrics: final · best (★ best of these runs)</SectionRow>
                  {metricNames.map((name) => {
                    const values = runs.map((r) => r.metrics.find((m) => m.name === name));
                    const direction = values.find(Boolean)?.direction ?? 'min';
                    const bests = values.flatMap((v) => (v ? [v.best] : []));
                    const winner = direction === 'min' ? Math.min(...bests) : Math.max(...bests);
                    return (
                      <Row key={name} label={name} mono testId="compare-metric">
                        {values.map((v, i) => (
                          <td key={runs[i].model_id} className="px-3 py-1.5 text-xs whitespace-nowrap tabular-nums">
                            {v ? (
                              <>
                                {formatNumber(v.final)} · {formatNumber(v.best)}
                                {bests.length > 1 && v.best === winner ? (
                                  <span className="ml-1 text-accent-text" aria-label="best of these runs">
                                    ★
                                  </span>
                                ) : null}
                              </>
                            ) : (
                              <span className="text-fg-subtle">—</span>
                            )}
                          </td>
                        ))}
                      </Row>
                    );
                  })}
                </tbody>
              </table>
            </div>
          </Card>

          <section aria-labelledby="compare-charts-title" className="flex flex-col gap-4">
            <div className="flex flex-wrap items-end justify-between gap-3">
              <h2 id="compare-charts-title" className="text-[15px] font-semibold text-fg">
                Training curves
              </h2>
              <SegmentedControl
                label="X-axis"
                size="sm"
                value={axis}
                options={COMPARE_AXES.map((value) => ({ value, label: AXIS_LABELS[value] }))}
                onChange={(value) => void setUrl({ axis: value })}
                data-testid="compare-axis"
              />
            </div>
            <ChartControls
              smoothing={smoothing}
              onSmoothingChange={setSmoothing}
              logScale={logScale}
              onLogScaleChange={setLogScale}
            >
              {axis === 'job_step' ? (
                <span className="text-xs text-fg-subtle">Each run&apos;s latest job, from its first step.</span>
              ) : null}
            </ChartControls>
            {gaps.length ? (
              <p className="text-sm text-fg-muted" role="note" data-testid="compare-axis-gaps">
                Not on this axis: {gaps.join('; ')}.
              </p>
            ) : null}
            {histories.error ? (
              <RetryAlert title="Could not load the runs' curves" onRetry={() => void histories.refetch()}>
                {histories.error.message}
              </RetryAlert>
            ) : !curves ? (
              <div className="grid gap-4 lg:grid-cols-2">
                <Skeleton className="h-[300px] w-full" />
                <Skeleton className="h-[300px] w-full" />
              </div>
            ) : charts.length === 0 ? (
              <Card>
                <EmptyState
                  title="No training curves yet"
                  description="These models have no gradient steps: the curves appear once a job trains them."
                />
              </Card>
            ) : (
              <div className="grid gap-4 lg:grid-cols-2" data-testid="compare-charts">
                {charts.map((chart) => (
                  <MetricChartCard
                    key={chart.metric}
                    chart={chart}
                    smoothing={smoothing}
                    logScale={logScale}
                    filePrefix="compare"
                    xLabel={AXIS_LABELS[axis]}
                    formatX={formatX}
                  />
                ))}
              </div>
            )}
          </section>
        </div>
      )}
    </>
  );
}

function Row({
  label,
  children,
  mono = false,
  differs = false,
  testId,
}: {
  label: string;
  children: React.ReactNode;
  mono?: boolean;
  differs?: boolean;
  testId?: string;
}) {
  return (
    <tr className="border-b border-line last:border-0" data-testid={testId} data-key={label}>
      <th
        scope="row"
        className={cx(
          'sticky left-0 bg-surface px-4 py-1.5 text-left font-normal whitespace-nowrap text-fg-muted',
          mono && 'font-mono text-xs',
          differs && 'font-semibold text-fg',
        )}
      >
        {label}
        {differs ? <span className="sr-only"> (differs)</span> : null}
      </th>
      {children}
    </tr>
  );
}

function SectionRow({ span, children }: { span: number; children: React.ReactNode }) {
  return (
    <tr className="border-b border-line bg-surface-muted/50">
      <th
        scope="colgroup"
        colSpan={span}
        className="px-4 py-1.5 text-left text-xs font-semibold tracking-wide text-fg-muted uppercase"
      >
        {children}
      </th>
    </tr>
  );
}
