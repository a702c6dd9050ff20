'use client';

import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode, type RefObject } from 'react';
import {
  Area,
  Brush,
  CartesianGrid,
  ComposedChart,
  DefaultZIndexes,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
  ZIndexLayer,
  type XAxisTickContentProps,
  useActiveTooltipLabel,
  usePlotArea,
  useXAxisDomain,
  useXAxisScale,
  useYAxisScale,
} from 'recharts';
import {
  bandsAtRow,
  buildChartData,
  valuesAtRow,
  valuesBefore,
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

type Lines = ReturnType<typeof buildChartData>['lines'];

/** Pixels to a tenth: enough for a 1.75 px stroke, and path strings a third shorter than full doubles. */
const px = (v: number) => Math.round(v * 10) / 10;

/**
 * The series' lines, each one svg path built from its own points in one pass. recharts' <Line> cost 60–100 ms per
 * chart on first render (per line: a point object per chart row through its store's selectors, then d3-shape), with
 * four to six charts of eight lines in view on the run comparison; this is a loop over the points a line has.
 * It draws what <Line type="linear" connectNulls> drew, with its classes (the theme's faded raw series and the
 * browser specs find lines by them): a path for two points or more, a dot for a line's only point. Inside the
 * brush's range only, as recharts drew the zoomed rows.
 */
function SeriesLines({ lines, smoothing, dots }: { lines: Lines; smoothing: number; dots: (key: string) => boolean }) {
  const x = useXAxisScale();
  const y = useYAxisScale();
  const domain = useXAxisDomain();
  if (!x || !y) return null;
  const first = domain?.[0];
  const last = domain?.[domain.length - 1];
  const from = typeof first === 'number' ? first : -Infinity;
  const to = typeof last === 'number' ? last : Infinity;
  const lineLayers: ReactNode[] = [];
  const dotLayers: ReactNode[] = [];
  for (const line of lines) {
    const faded = line.kind === 'raw' && smoothing > 0;
    const color = seriesColor(line.seriesIndex);
    const strokeWidth = faded ? 1.25 : 1.75;
    const drawn: [number, number][] = [];
    let d = '';
    for (const [step, value] of line.points) {
      if (step < from || step > to) continue;
      const cx = x(step);
      const cy = y(value);
      if (cx === undefined || cy === undefined || !Number.isFinite(cx) || !Number.isFinite(cy)) continue;
      d += `${d ? 'L' : 'M'}${px(cx)},${px(cy)}`;
      drawn.push([cx, cy]);
    }
    lineLayers.push(
      <g
        key={line.dataKey}
        className={faded ? 'recharts-layer recharts-line tb-raw-series' : 'recharts-layer recharts-line'}
      >
        {drawn.length > 1 ? (
          <path
            className="recharts-curve recharts-line-curve"
            d={d}
            fill="none"
            stroke={color}
            strokeWidth={strokeWidth}
            strokeLinejoin="round"
          />
        ) : null}
      </g>,
    );
    // A lone sample is a point, not a line: without a dot it would be invisible.
    if (dots(line.dataKey) && drawn.length)
      dotLayers.push(
        <g key={line.dataKey} className="recharts-layer recharts-line-dots">
          {drawn.map(([cx, cy], i) => (
            <circle
              key={i}
              className="recharts-dot recharts-line-dot"
              cx={cx}
              cy={cy}
              r={3}
              fill={color}
              stroke={color}
              strokeWidth={strokeWidth}
            />
          ))}
        </g>,
      );
  }
  return (
    <>
      <ZIndexLayer zIndex={DefaultZIndexes.line}>{lineLayers}</ZIndexLayer>
      <ZIndexLayer zIndex={DefaultZIndexes.scatter}>{dotLayers}</ZIndexLayer>
    </>
  );
}

/**
 * The dots on each (unfaded) series at the step under the pointer, as <Line activeDot> drew them; where each is
 * drawn is noted in `dotY`, to tell which series a click meant.
 */
function ActiveDots({
  lines,
  smoothing,
  rowByStep,
  dotY,
}: {
  lines: Lines;
  smoothing: number;
  rowByStep: Map<number, ChartRow>;
  dotY: RefObject<Map<number, { step: number; cy: number }>>;
}) {
  const label = useActiveTooltipLabel();
  const x = useXAxisScale();
  const y = useYAxisScale();
  const step = Number(label);
  const row = label === undefined ? undefined : rowByStep.get(step);
  if (!row || !x || !y) return null;
  const cx = x(step);
  const dots: ReactNode[] = [];
  for (const line of lines) {
    if (line.kind === 'raw' && smoothing > 0) continue;
    const value = row[line.dataKey];
    const cy = typeof value === 'number' ? y(value) : undefined;
    if (cx === undefined || cy === undefined) continue;
    dotY.current.set(line.seriesIndex, { step, cy });
    dots.push(
      <circle
        key={line.dataKey}
        cx={cx}
        cy={cy}
        r={3.5}
        fill={seriesColor(line.seriesIndex)}
        stroke="var(--tb-surface)"
        strokeWidth={2}
      />,
    );
  }
  return (
    <ZIndexLayer zIndex={DefaultZIndexes.activeDot}>
      <g className="recharts-layer recharts-active-dot">{dots}</g>
    </ZIndexLayer>
  );
}

const AXIS_TICK = { fill: 'var(--tb-fg-subtle)', fontSize: 11 };
const noGridLines = () => [];
/** The chart's right margin: the last x label may reach into it, as recharts' own placement let it. */
const MARGIN_RIGHT = 12;
/** The least space between two x labels (recharts' minTickGap). */
const LABEL_GAP = 5;

/** An x label's width at the axis' 11 px: digits and most letters about 6.5 px, separators and spaces less. */
function labelWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += ch === ',' || ch === '.' || ch === ' ' ? 3.5 : 6.5;
  return width;
}

/** The widest of the labels an axis over [from, to] can have, from nine values across it. */
function widestLabel(from: number, to: number, format: (x: number) => string): number {
  let widest = 0;
  for (let i = 0; i <= 8; i++) widest = Math.max(widest, labelWidth(format(from + ((to - from) * i) / 8)));
  return widest;
}

/**
 * One x-axis label, placed as recharts' 'preserveEnd' interval placed them but from estimated widths instead of
 * measured ones. recharts' ticks over a fixed domain run evenly spaced from its start, the last at its end (maybe
 * closer to the one before): when the widest label does not fit that spacing every k-th is kept, none that would run
 * into the last label, which is always shown and pulled left until it ends inside the chart's right margin.
 */
function XTickLabel({ tick, widest }: { tick: XAxisTickContentProps; widest: number }) {
  const plot = usePlotArea();
  const domain = useXAxisDomain();
  const { index, visibleTicksCount, payload, tickFormatter } = tick;
  const format = (value: number) => (tickFormatter ? tickFormatter(value, index) : String(value));
  const text = format(payload.value as number);
  const x = Number(tick.x);
  let cx = x;
  if (plot) {
    const end = plot.x + plot.width + MARGIN_RIGHT;
    if (index < visibleTicksCount - 1) {
      const spacing = index > 0 ? (x - plot.x) / index : Infinity;
      if (index % Math.max(1, Math.ceil((widest + LABEL_GAP) / spacing)) !== 0) return null;
      const lastValue = domain?.[domain.length - 1];
      const lastWidth = typeof lastValue === 'number' ? labelWidth(format(lastValue)) : widest;
      const lastLeft = Math.min(plot.x + plot.width, end - lastWidth / 2) - lastWidth / 2;
      if (x + labelWidth(text) / 2 + LABEL_GAP > lastLeft) return null;
    }
    cx = Math.min(x, end - labelWidth(text) / 2);
  }
  return (
    <text
      x={cx}
      y={tick.y}
      textAnchor="middle"
      fontSize={AXIS_TICK.fontSize}
      fill={AXIS_TICK.fill}
      className="recharts-text recharts-cartesian-axis-tick-value"
    >
      <tspan x={cx} dy="0.71em">
        {text}
      </tspan>
    </text>
  );
}
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
  // A run without a point at this step (compared runs log, or are downsampled, at steps of their own): its last
  // point before it, with that point's step, rather than a dash under the line it draws there.
  const kind = smoothing > 0 ? 'smoothed' : 'raw';
  const before = valuesBefore(step, lines, kind, kind === 'smoothed' ? smoothed : raw);
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
                {value !== undefined ? (
                  formatNumber(value)
                ) : before.has(i) ? (
                  <>
                    {formatNumber(before.get(i)!.value)}{' '}
                    <span className="font-normal text-fg-subtle">at {formatX(before.get(i)!.step)}</span>
                  </>
                ) : (
                  '—'
                )}
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
 * Imported on its own by MetricChartCard: recharts and d3 stay out of every route's first-load JavaScript. recharts
 * draws the axes, grid, tooltip, zoom handle, flags and bands; the lines are SeriesLines' paths.
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
  // The zoom handles' range (row indices), from the brush; the y axis fits the rows inside it.
  const [brushRange, setBrushRange] = useState<[number, number] | null>(null);
  const shownRows = useMemo(() => {
    if (!brushRange || rows.length === 0) return rows;
    const start = Math.max(0, Math.min(brushRange[0], rows.length - 1));
    const end = Math.max(start, Math.min(brushRange[1], rows.length - 1));
    return start === 0 && end === rows.length - 1 ? rows : rows.slice(start, end + 1);
  }, [rows, brushRange]);
  // Tick labels precise enough for the span of the values in view, and an axis wide enough for the longest of
  // them. A zoom rescales the y axis to the rows it keeps, as recharts' 'auto' domain did for its <Line>s: a curve
  // that flattens late in a run is then visible in its own scale.
  const yAxis = useMemo(() => {
    const extent = rowsExtent(shownRows);
    // A log scale keeps recharts' ticks (powers of ten); a linear one gets its own, labelled so none repeat.
    const linear = logScale ? null : linearYAxis(extent);
    const format = linear?.format ?? yTickFormatter(extent);
    const labelled = linear?.ticks ?? extent ?? [];
    const longest = labelled.length ? Math.max(...labelled.map((v) => format(v).length)) : 0;
    // The lines are drawn from the axes' scales, not registered with recharts as <Line>s: the y axis cannot find its
    // domain in them, so it is given one on the log scale too (the data's extent, as recharts' 'auto' took).
    return {
      format,
      ticks: linear?.ticks,
      domain: linear?.domain ?? extent ?? undefined,
      width: Math.max(56, Math.ceil(longest * 6.5 + 10)),
    };
  }, [shownRows, logScale]);
  const widest = useMemo(
    () => (rows.length ? widestLabel(rows[0].step, rows[rows.length - 1].step, formatX) : 0),
    [rows, formatX],
  );
  const renderXTick = useCallback(
    (tick: XAxisTickContentProps) => <XTickLabel tick={tick} widest={widest} />,
    [widest],
  );
  const single = rows.length === 1;
  // Lines with one point among other series' many (an SFT job's one val/loss beside 50 train steps): a path of zero
  // length draws nothing, so they get a dot too (issue 41).
  const lone = useMemo(() => new Set(lines.filter((l) => l.points.length === 1).map((l) => l.dataKey)), [lines]);
  // The step under the pointer, from mouse moves: recharts' own onClick does not reliably carry the
  // active label (it is undefined when the click lands on a dot layer), while every move does.
  const hovered = useRef<number | null>(null);
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
        margin={{ top: 8, right: MARGIN_RIGHT, bottom: brush && !interactive ? BRUSH_HEIGHT : 0, left: 0 }}
        style={onStepClick ? { cursor: 'pointer' } : undefined}
        onMouseMove={(state) => {
          const step = Number(state.activeLabel);
          hovered.current = state.activeLabel !== undefined && Number.isFinite(step) ? step : null;
        }}
        onMouseLeave={() => {
          hovered.current = null;
        }}
      >
        <CartesianGrid
          stroke="var(--tb-line)"
          vertical={false}
          // recharts works out the vertical lines' places even with vertical={false}, measuring every x label in
          // the DOM to do it: 137 ms of the comparison's first render (bench:ui profile). There are none to draw.
          verticalCoordinatesGenerator={noGridLines}
        />
        <XAxis
          dataKey="step"
          type="number"
          domain={['dataMin', 'dataMax']}
          allowDecimals={false}
          // Every tick is handed to XTickLabel, which thins and places the labels from estimated widths: recharts'
          // own pass ('preserveEnd') measures each label in the DOM, a forced layout per label during the render.
          interval={0}
          tick={renderXTick}
          stroke="var(--tb-line-strong)"
          tickFormatter={formatX}
        />
        <YAxis
          scale={logScale ? 'log' : 'auto'}
          domain={yAxis.domain ?? ['auto', 'auto']}
          ticks={yAxis.ticks}
          // Without <Line>s recharts finds no data for this axis, and resolves a given domain only when told the data
          // may overflow it; the domain is the data's extent (or nice ticks around it), so nothing does.
          allowDataOverflow
          tick={AXIS_TICK}
          // A linear axis' few ticks are its own (linearYAxis) and fit: no need for recharts to measure them to
          // drop the ones that collide. A log scale's are recharts' (up to nine a decade) and may.
          interval={logScale ? 'preserveEnd' : 0}
          stroke="var(--tb-line-strong)"
          tickFormatter={yAxis.format}
          width={yAxis.width}
        />
        {interactive ? (
          <Tooltip
            isAnimationActive={false}
            cursor={{ stroke: 'var(--tb-line-strong)' }}
            // recharts shows its tooltip only with a payload, which it builds from its <Line>s: the lines are drawn
            // by SeriesLines, so the body reads the hovered row itself and is shown while the tooltip is active.
            wrapperStyle={{ visibility: 'visible' }}
            content={({ label, active }) => (
              <TooltipBody
                step={active && typeof label === 'number' ? label : undefined}
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
        <SeriesLines lines={lines} smoothing={smoothing} dots={(key) => single || lone.has(key)} />
        {interactive ? <ActiveDots lines={lines} smoothing={smoothing} rowByStep={rowByStep} dotY={dotY} /> : null}
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
            // The zoom handles' accessible name; recharts would announce "Min value: undefined" for rows without a name.
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
