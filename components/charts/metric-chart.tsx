'use client';

import { useEffect, useMemo, useRef, useState } from 'react';
import {
  Area,
  Brush,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import {
  bandsAtRow,
  buildChartData,
  valuesAtRow,
  type ChartRow,
  type ChartSpec,
} from '@/lib/client/charts/chart-series';
import { linearYAxis, rowsExtent, yTickFormatter } from '@/lib/client/charts/chart-ticks';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import { seriesColor } from './chart-colors';

export interface MetricChartProps {
  chart: ChartSpec;
  smoothing: number;
  logScale: boolean;
  height?: number;
  /**
   * Called with the step of the point under the pointer and the split of the series drawn nearest to it (so a
   * click on a val point opens val, not every split); makes the chart clickable.
   */
  onStepClick?: (step: number, split: string | undefined) => void;
  /** The brush's current step range, reported so the card can offer "Reset zoom". */
  onZoomChange?: (range: { from: number; to: number } | null) => void;
  /** Vertical ticks at given x (checkpoints on the training curve), each a button when it has `onSelect`. */
  markers?: readonly ChartMarker[];
  /** The x-axis' name in the tooltip ("Step", "Gradient step"). */
  xLabel?: string;
  /** How x values are written on the axis, the tooltip and the zoom (default: an integer, "12,345"). */
  formatX?: (x: number) => string;
}

const formatStep = (x: number) => x.toLocaleString('en');

export interface ChartMarker {
  x: number;
  /** Short text on the tick, e.g. the checkpoint's step. */
  label: string;
  /** The tick's accessible name, e.g. "Checkpoint step 3". */
  name: string;
  selected?: boolean;
  onSelect?: () => void;
}

/**
 * A tick's flag: a small labelled box at the top of its line. An svg element with role=button and tabIndex is
 * reachable and operable by keyboard like any button.
 */
function MarkerFlag({ marker, x, y }: { marker: ChartMarker; x: number; y: number }) {
  const width = Math.max(18, marker.label.length * 6.5 + 8);
  const select = marker.onSelect;
  return (
    <g
      role={select ? 'button' : undefined}
      tabIndex={select ? 0 : undefined}
      aria-label={marker.name}
      aria-pressed={select ? Boolean(marker.selected) : undefined}
      data-testid="chart-marker"
      style={select ? { cursor: 'pointer' } : undefined}
      onClick={(event) => {
        event.stopPropagation();
        select?.();
      }}
      onKeyDown={(event) => {
        if (!select || (event.key !== 'Enter' && event.key !== ' ')) return;
        event.preventDefault();
        select();
      }}
    >
      <rect
        x={x - width / 2}
        y={y}
        width={width}
        height={15}
        rx={3}
        fill={marker.selected ? 'var(--tb-accent)' : 'var(--tb-surface)'}
        stroke="var(--tb-accent)"
      />
      <text
        x={x}
        y={y + 11}
        textAnchor="middle"
        fontSize={10}
        fill={marker.selected ? 'var(--tb-accent-fg)' : 'var(--tb-accent-text)'}
      >
        {marker.label}
      </text>
    </g>
  );
}

const AXIS_TICK = { fill: 'var(--tb-fg-subtle)', fontSize: 11 };
const BRUSH_HEIGHT = 20;

interface TooltipBodyProps {
  step: number | undefined;
  row: ChartRow | undefined;
  chart: ChartSpec;
  lines: ReturnType<typeof buildChartData>['lines'];
  bands: ReturnType<typeof buildChartData>['bands'];
  smoothing: number;
  xLabel: string;
  formatX: (x: number) => string;
}

function TooltipBody({ step, row, chart, lines, bands, smoothing, xLabel, formatX }: TooltipBodyProps) {
  if (step === undefined || !row) return null;
  const raw = valuesAtRow(row, lines, 'raw');
  const smoothed = valuesAtRow(row, lines, 'smoothed');
  const spread = bandsAtRow(row, bands);
  return (
    <div className="rounded-lg border border-line bg-surface-raised px-3 py-2 text-xs shadow-lg">
      <p className="mb-1 font-medium text-fg">
        {xLabel} {formatX(step)}
      </p>
      <ul className="space-y-0.5">
        {chart.series.map((s, i) => {
          const value = smoothing > 0 ? smoothed.get(i) : raw.get(i);
          return (
            <li key={s.name} className="flex items-center gap-2 tabular-nums">
              <span aria-hidden="true" className="size-2 rounded-full" style={{ backgroundColor: seriesColor(i) }} />
              <span className="text-fg-muted">{s.name}</span>
              <span className="ml-auto pl-3 font-medium text-fg">
                {value === undefined ? '—' : formatNumber(value)}
              </span>
              {smoothing > 0 && raw.has(i) ? (
                <span className="text-fg-subtle">({formatNumber(raw.get(i)!)})</span>
              ) : null}
              {spread.has(i) ? (
                <span className="text-fg-subtle" data-testid="chart-tooltip-band">
                  p10–p90 {formatNumber(spread.get(i)![0])} to {formatNumber(spread.get(i)![1])}
                </span>
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/**
 * A presentational line chart of one metric across splits: it draws what it is given and fetches
 * nothing. Raw values are faded behind the smoothed curve when smoothing is on, as in TensorBoard.
 * Loaded with next/dynamic: recharts and d3 stay out of every route's first-load JavaScript.
 */
export function MetricChart({
  chart,
  smoothing,
  logScale,
  height = 240,
  onStepClick,
  onZoomChange,
  markers = [],
  xLabel = 'Step',
  formatX = formatStep,
}: MetricChartProps) {
  const { rows, lines, bands } = useMemo(
    () => buildChartData(chart, { smoothing, logScale }),
    [chart, smoothing, logScale],
  );
  const rowByStep = useMemo(() => new Map(rows.map((r) => [r.step, r])), [rows]);
  // Tick labels precise enough for the data's span, and an axis wide enough for the longest of them.
  const yAxis = useMemo(() => {
    const extent = rowsExtent(rows);
    // A log scale keeps recharts' ticks (powers of ten); a linear one gets its own, labelled so none repeat.
    const linear = logScale ? null : linearYAxis(extent);
    const format = linear?.format ?? yTickFormatter(extent);
    const labelled = linear?.ticks ?? extent ?? [];
    const longest = labelled.length ? Math.max(...labelled.map((v) => format(v).length)) : 0;
    return { format, ticks: linear?.ticks, domain: linear?.domain, width: Math.max(56, Math.ceil(longest * 6.5 + 10)) };
  }, [rows, logScale]);
  const single = rows.length === 1;
  // Lines with one point among other series' many (an SFT job's one val/loss beside 50 train steps): a path of zero
  // length draws nothing, so they get a dot too (issue 41).
  const lone = useMemo(() => {
    const counts = new Map<string, number>();
    for (const r of rows)
      for (const l of lines) {
        const v = (r as Record<string, unknown>)[l.dataKey];
        if (typeof v === 'number' && Number.isFinite(v)) counts.set(l.dataKey, (counts.get(l.dataKey) ?? 0) + 1);
      }
    return new Set(lines.filter((l) => counts.get(l.dataKey) === 1).map((l) => l.dataKey));
  }, [rows, lines]);
  // The step under the pointer, from mouse moves: recharts' own onClick does not reliably carry the
  // active label (it is undefined when the click lands on a dot layer), while every move does.
  const hovered = useRef<number | null>(null);
  // The zoom handles' accessible name; recharts would announce "Min value: undefined" for rows without a name.
  const [brushRange, setBrushRange] = useState<[number, number] | null>(null);
  // Where each series' active dot is drawn for the hovered step (svg y), to tell which series a click meant.
  const dotY = useRef(new Map<number, { step: number; cy: number }>());

  // The tooltip and the zoom handle attach in the first idle period after the lines have drawn: they cost about
  // 40 % of a chart's first render (bench:ui's model page: 410–440 against 660–740 ms for the charts in view), and
  // nobody hovers or drags before seeing the curve. Until then the handle's 20 px are kept as a margin, so the plot
  // does not move when it comes.
  const [interactive, setInteractive] = useState(false);
  useEffect(() => {
    if (typeof requestIdleCallback !== 'function') {
      const timer = setTimeout(() => setInteractive(true), 0);
      return () => clearTimeout(timer);
    }
    const id = requestIdleCallback(() => setInteractive(true), { timeout: 300 });
    return () => cancelIdleCallback(id);
  }, []);
  const brush = rows.length > 2;

  const drawing = (
    <ResponsiveContainer width="100%" height={height}>
      <ComposedChart
        data={rows}
        margin={{ top: 8, right: 12, bottom: brush && !interactive ? BRUSH_HEIGHT : 0, left: 0 }}
        style={onStepClick ? { cursor: 'pointer' } : undefined}
        onMouseMove={(state) => {
          const step = Number(state.activeLabel);
          hovered.current = state.activeLabel !== undefined && Number.isFinite(step) ? step : null;
        }}
        onMouseLeave={() => {
          hovered.current = null;
        }}
      >
        <CartesianGrid stroke="var(--tb-line)" vertical={false} />
        <XAxis
          dataKey="step"
          type="number"
          domain={['dataMin', 'dataMax']}
          allowDecimals={false}
          tick={AXIS_TICK}
          stroke="var(--tb-line-strong)"
          tickFormatter={formatX}
        />
        <YAxis
          scale={logScale ? 'log' : 'auto'}
          domain={yAxis.domain ?? ['auto', 'auto']}
          ticks={yAxis.ticks}
          allowDataOverflow={false}
          tick={AXIS_TICK}
          stroke="var(--tb-line-strong)"
          tickFormatter={yAxis.format}
          width={yAxis.width}
        />
        {interactive ? (
          <Tooltip
            isAnimationActive={false}
            cursor={{ stroke: 'var(--tb-line-strong)' }}
            content={({ label }) => (
              <TooltipBody
                step={typeof label === 'number' ? label : undefined}
                row={typeof label === 'number' ? rowByStep.get(label) : undefined}
                chart={chart}
                lines={lines}
                bands={bands}
                smoothing={smoothing}
                xLabel={xLabel}
                formatX={formatX}
              />
            )}
          />
        ) : null}
        {bands.map((band) => (
          // Where the middle 80 % of the trajectories' rewards lie: behind the series' line, in its colour.
          <Area
            key={band.dataKey}
            dataKey={band.dataKey}
            name={`${band.seriesName} p10–p90`}
            type="linear"
            stroke="none"
            fill={seriesColor(band.seriesIndex)}
            fillOpacity={0.14}
            connectNulls
            isAnimationActive={false}
            // recharts draws a lone sample of an area as dots; the line's own dot is the point (the tooltip
            // still gives the band).
            dot={false}
            activeDot={false}
            legendType="none"
          />
        ))}
        {lines.map((line) => {
          const faded = line.kind === 'raw' && smoothing > 0;
          return (
            <Line
              key={line.dataKey}
              dataKey={line.dataKey}
              name={line.seriesName}
              type="linear"
              stroke={seriesColor(line.seriesIndex)}
              // The faded opacity is the theme's (globals.css --tb-raw-series-opacity): dark needs more.
              className={faded ? 'tb-raw-series' : undefined}
              strokeWidth={faded ? 1.25 : 1.75}
              // A lone sample is a point, not a line: without a dot it would be invisible.
              dot={single || lone.has(line.dataKey) ? { r: 3, fill: seriesColor(line.seriesIndex) } : false}
              activeDot={
                faded
                  ? false
                  : (props: { cx?: number; cy?: number; payload?: { step?: number } }) => {
                      const step = props.payload?.step;
                      if (typeof props.cy === 'number' && typeof step === 'number')
                        dotY.current.set(line.seriesIndex, { step, cy: props.cy });
                      return (
                        <circle
                          key={line.dataKey}
                          cx={props.cx}
                          cy={props.cy}
                          r={3.5}
                          fill={seriesColor(line.seriesIndex)}
                          stroke="var(--tb-surface)"
                          strokeWidth={2}
                        />
                      );
                    }
              }
              // Steps a series did not sample are absent keys; gaps are separate keys (see buildChartData).
              connectNulls
              isAnimationActive={false}
              legendType="none"
            />
          );
        })}
        {markers.map((marker) => (
          <ReferenceLine
            key={`marker-${marker.x}`}
            x={marker.x}
            stroke="var(--tb-accent)"
            strokeOpacity={marker.selected ? 0.9 : 0.45}
            strokeDasharray="3 3"
            ifOverflow="hidden"
            label={(props: { viewBox?: { x?: number; y?: number } }) => (
              <MarkerFlag marker={marker} x={props.viewBox?.x ?? 0} y={props.viewBox?.y ?? 0} />
            )}
          />
        ))}
        {brush && interactive ? (
          <Brush
            dataKey="step"
            height={BRUSH_HEIGHT}
            travellerWidth={8}
            stroke="var(--tb-accent)"
            fill="var(--tb-surface)"
            tickFormatter={formatX}
            ariaLabel={(() => {
              const [start, end] = brushRange ?? [0, rows.length - 1];
              const from = rows[Math.min(start, rows.length - 1)]?.step ?? 0;
              const to = rows[Math.min(end, rows.length - 1)]?.step ?? 0;
              return `Zoom: ${xLabel === 'Step' ? 'steps' : xLabel.toLowerCase()} ${formatX(from)} to ${formatX(to)}; arrow keys move this handle`;
            })()}
            onChange={(range) => {
              const start = range.startIndex ?? 0;
              const end = range.endIndex ?? rows.length - 1;
              setBrushRange([start, end]);
              if (!onZoomChange) return;
              onZoomChange(
                start === 0 && end === rows.length - 1 ? null : { from: rows[start].step, to: rows[end].step },
              );
            }}
          />
        ) : null}
      </ComposedChart>
    </ResponsiveContainer>
  );
  if (!onStepClick) return drawing;
  return (
    // Pointer-only shortcut; keyboard users reach the same trajectories through the Trajectories tab.
    <div
      onClick={(event) => {
        if (hovered.current === null) return;
        const svg = event.currentTarget.querySelector('svg');
        const y = svg ? event.clientY - svg.getBoundingClientRect().top : null;
        let nearest: number | undefined;
        let distance = Infinity;
        if (y !== null)
          for (const [index, dot] of dotY.current)
            if (dot.step === hovered.current && Math.abs(dot.cy - y) < distance) {
              nearest = index;
              distance = Math.abs(dot.cy - y);
            }
        onStepClick(hovered.current, nearest === undefined ? undefined : chart.series[nearest]?.split);
      }}
    >
      {drawing}
    </div>
  );
}
