'use client';

import { useQuery } from '@tanstack/react-query';
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { Skeleton } from '@/components/ui/skeleton';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { countNonPositive, groupSeriesIntoCharts, type ChartSpec } from '@/lib/client/charts/chart-series';
import { trainingCurveCharts } from '@/lib/client/charts/job-events';
import { historyRangeQuery } from '@/lib/client/queries/history';
import type { HistoryAxis } from '@/lib/schemas/trajectories';
import type { ChartMarker } from './metric-chart';
import { csvFileName, seriesToCsv } from '@/lib/client/charts/csv-export';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import { seriesColor } from './chart-colors';
import { useNearViewport } from './use-near-viewport';

const CHART_HEIGHT = 240;

type ChartModule = typeof import('./metric-chart');

/**
 * recharts (and the d3 modules under it) stay out of every route's first-load JavaScript: the chart module is
 * imported on its own. A page that imports this card draws charts, so the import starts as soon as the page's scripts
 * run, while the page hydrates and its data arrives (from an effect after hydration, its download and compilation
 * came after the data). Not through next/dynamic: React.lazy suspends the first render even when the module is
 * there, and React then holds the revealed chart back for its 300 ms fallback throttle (bench:ui: 300–400 ms
 * between the chart's slot and its lines, on every load).
 */
let chartModule: ChartModule | null = null;
const chartModuleLoaded: Promise<ChartModule> | null =
  typeof window === 'undefined'
    ? null
    : import('./metric-chart').then((m) => {
        chartModule = m;
        return m;
      });

/** The chart module, once loaded: null for the first render of a page whose scripts have not fetched it yet. */
function useChartModule(): ChartModule | null {
  const [loaded, setLoaded] = useState(chartModule);
  useEffect(() => {
    if (loaded) return;
    let live = true;
    void chartModuleLoaded?.then((m) => live && setLoaded(m));
    return () => {
      live = false;
    };
  }, [loaded]);
  return loaded;
}

interface MetricChartCardProps {
  chart: ChartSpec;
  smoothing: number;
  logScale: boolean;
  /** File name prefix for the CSV download, e.g. the model name. */
  filePrefix: string;
  onStepClick?: (step: number, split: string | undefined) => void;
  stepClickHint?: string;
  /** The model whose run history this is: a zoomed, downsampled chart can then fetch its range in full detail. */
  modelId?: string;
  /** Which of the model's histories the chart draws (the range it fetches in detail comes from the same one). */
  axis?: HistoryAxis;
  markers?: readonly ChartMarker[];
  /** The x-axis' name where it is not a checkpoint step, e.g. "Gradient step". */
  xLabel?: string;
  /** How x values are written (default: an integer step); run comparison's time and token axes set it. */
  formatX?: (x: number) => string;
}

const formatStep = (x: number) => x.toLocaleString('en');

function downloadText(text: string, fileName: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked on the next tick: some browsers start the download asynchronously.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function MetricTable({ chart, xLabel, formatX }: { chart: ChartSpec; xLabel: string; formatX: (x: number) => string }) {
  const rows = useMemo(() => {
    const steps = new Map<number, Map<number, number | null>>();
    chart.series.forEach((s, i) => {
      for (const p of s.points) {
        const m = steps.get(p.step) ?? new Map<number, number | null>();
        m.set(i, p.value);
        steps.set(p.step, m);
      }
    });
    return [...steps.entries()].sort((a, b) => a[0] - b[0]);
  }, [chart]);
  return (
    <div className="max-h-[240px] overflow-y-auto" tabIndex={0} role="region" aria-label={`${chart.metric} values`}>
      <Table data-testid="metric-table">
        <caption className="sr-only">
          {chart.metric} by {xLabel.toLowerCase()}
        </caption>
        <thead className="sticky top-0">
          <tr>
            <Th className="text-right">{xLabel}</Th>
            {chart.series.map((s) => (
              <Th key={s.name} className="text-right normal-case">
                {s.name}
              </Th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([step, values]) => (
            <Tr key={step}>
              <Td className="py-1.5 text-right tabular-nums text-fg-muted">{formatX(step)}</Td>
              {chart.series.map((s, i) => {
                const v = values.get(i);
                return (
                  <Td key={s.name} className="py-1.5 text-right tabular-nums">
                    {v === undefined || v === null ? <span className="text-fg-subtle">—</span> : formatNumber(v)}
                  </Td>
                );
              })}
            </Tr>
          ))}
        </tbody>
      </Table>
    </div>
  );
}

/**
 * One metric: legend, chart or table, CSV download, and the zoom range with a reset. Memoised: a live page polls
 * every second, and a recharts chart costs milliseconds to render again even when its series did not change.
 */
export const MetricChartCard = memo(function MetricChartCard({
  chart: overview,
  smoothing,
  logScale,
  filePrefix,
  onStepClick,
  stepClickHint,
  modelId,
  axis = 'checkpoint',
  markers,
  xLabel = 'Step',
  formatX = formatStep,
}: MetricChartCardProps) {
  const [view, setView] = useState<'chart' | 'table'>('chart');
  const [zoom, setZoom] = useState<{ from: number; to: number } | null>(null);
  // A step range fetched again from the server: the overview of a long series holds ~1,000 of its points, so
  // a zoom into it would otherwise show only the few that fell inside.
  const [detailRange, setDetailRange] = useState<{ from: number; to: number } | null>(null);
  // Remounting the chart is how the brush goes back to the full range: recharts keeps its own index state.
  const [chartKey, setChartKey] = useState(0);
  const keys = overview.series.map((s) => s.name);
  const detail = useQuery({
    ...historyRangeQuery(modelId ?? '', keys, detailRange?.from ?? 0, detailRange?.to ?? 0, axis),
    enabled: Boolean(modelId && detailRange),
    select: (data) =>
      (axis === 'gradient_step'
        ? trainingCurveCharts(data.series)
        : groupSeriesIntoCharts(data.series, data.bands)
      ).find((c) => c.metric === overview.metric) ?? null,
  });
  const chart = detailRange && detail.data ? detail.data : overview;
  const hidden = logScale ? countNonPositive(chart) : 0;
  const downsampled = chart.series.some((s) => s.totalPoints > s.points.length);
  // Offered again inside a detailed range that is itself still downsampled (a zoom into 1M steps, say).
  const canLoadDetail = Boolean(modelId) && zoom !== null && downsampled;
  const shownRange = zoom ?? detailRange;

  function resetZoom() {
    setZoom(null);
    setDetailRange(null);
    setChartKey((k) => k + 1);
  }
  const titleId = `chart-${chart.metric.replace(/[^a-zA-Z0-9_-]/g, '-')}`;
  // Drawn once the card is about to scroll into view: below the fold, a skeleton of the same height holds its place.
  const cardRef = useRef<HTMLDivElement>(null);
  const near = useNearViewport(cardRef);
  const chartLib = useChartModule();

  function downloadCsv() {
    const csv = seriesToCsv(
      chart.series.map((s) => ({ name: s.name, points: s.points.map((p) => [p.step, p.value] as const) })),
    );
    downloadText(csv, csvFileName(`${filePrefix}-${chart.metric}`));
  }

  return (
    <Card aria-labelledby={titleId} data-testid="metric-chart-card" data-metric={chart.metric}>
      <div className="flex flex-wrap items-start justify-between gap-2 px-4 pt-3.5 pb-2">
        <div className="min-w-0">
          <h3 id={titleId} className="truncate text-sm font-semibold text-fg">
            {chart.metric}
          </h3>
          <ul className="mt-1 flex flex-wrap gap-x-3 gap-y-1 text-xs text-fg-muted" aria-label="Series">
            {chart.series.map((s, i) => (
              <li key={s.name} className="inline-flex items-center gap-1.5">
                <span
                  aria-hidden="true"
                  className="h-0.5 w-3 rounded-full"
                  style={{ backgroundColor: seriesColor(i) }}
                />
                {s.split || s.name}
              </li>
            ))}
          </ul>
        </div>
        <div className="flex items-center gap-1">
          <div role="group" aria-label="View" className="inline-flex rounded-md border border-line p-0.5">
            {(['chart', 'table'] as const).map((v) => (
              <button
                key={v}
                type="button"
                aria-pressed={view === v}
                onClick={() => setView(v)}
                className={cx(
                  'rounded px-2 py-0.5 text-xs font-medium capitalize transition-colors',
                  view === v ? 'bg-surface-muted text-fg' : 'text-fg-muted hover:text-fg',
                )}
              >
                {v}
              </button>
            ))}
          </div>
          <Button
            variant="ghost"
            size="sm"
            onClick={downloadCsv}
            aria-label={`Download ${chart.metric} as CSV`}
            data-testid="chart-csv"
          >
            CSV
          </Button>
        </div>
      </div>
      <div className="px-2 pb-2">
        {view === 'chart' ? (
          // A group, not an img: recharts makes the chart keyboard-focusable, and an img may not hold focusable parts.
          <div
            role="group"
            aria-label={`Line chart of ${chart.metric}: ${chart.series.map((s) => s.name).join(', ')}. Use the table view for the values.`}
            data-testid="metric-chart"
            style={{ minHeight: CHART_HEIGHT }}
            ref={cardRef}
          >
            {near && chartLib ? (
              <chartLib.MetricChart
                key={chartKey}
                chart={chart}
                smoothing={smoothing}
                logScale={logScale}
                height={CHART_HEIGHT}
                onStepClick={onStepClick}
                onZoomChange={setZoom}
                markers={markers}
                xLabel={xLabel}
                formatX={formatX}
              />
            ) : (
              <Skeleton className="h-[240px] w-full" />
            )}
          </div>
        ) : (
          <MetricTable chart={chart} xLabel={xLabel} formatX={formatX} />
        )}
      </div>
      {zoom || detailRange || hidden > 0 || downsampled || (onStepClick && stepClickHint) ? (
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-t border-line px-4 py-2 text-xs text-fg-subtle">
          {zoom || detailRange ? (
            <span className="inline-flex items-center gap-2" data-testid="chart-zoom">
              {xLabel}s {formatX(shownRange!.from)}–{formatX(shownRange!.to)}
              {canLoadDetail ? (
                <button
                  type="button"
                  className="font-medium text-accent-text hover:underline"
                  data-testid="chart-load-detail"
                  onClick={() => {
                    setDetailRange(zoom);
                    setZoom(null);
                    setChartKey((k) => k + 1);
                  }}
                >
                  Show this range in detail
                </button>
              ) : null}
              {detailRange && detail.isFetching ? <span aria-live="polite">Loading detail…</span> : null}
              {detailRange && detail.isError ? (
                <span role="alert" className="text-danger-text">
                  Could not load the detail: {detail.error.message}
                </span>
              ) : null}
              <button type="button" className="font-medium text-accent-text hover:underline" onClick={resetZoom}>
                Reset zoom
              </button>
            </span>
          ) : null}
          {hidden > 0 ? (
            <span>
              {hidden} value{hidden === 1 ? '' : 's'} ≤ 0 not shown on the log scale
            </span>
          ) : null}
          {downsampled ? <span>Downsampled; extremes and the last value kept</span> : null}
          {onStepClick && stepClickHint ? <span className="ml-auto">{stepClickHint}</span> : null}
        </div>
      ) : null}
    </Card>
  );
});
