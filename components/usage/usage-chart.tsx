'use client';

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatCompact, formatCount, type UsageChartData } from '@/lib/client/charts/usage';

/**
 * Mid-tone colours that keep their contrast on both the light and the dark surface; the order puts
 * neighbours in a stack far apart in hue.
 */
export const USAGE_COLORS = ['#6366f1', '#10b981', '#f59e0b', '#ec4899', '#0ea5e9', '#8b5cf6', '#ef4444', '#84cc16'];

function shortDay(day: string): string {
  // The day is a UTC date; formatting it in UTC keeps "2026-03-01" from showing as Feb 28 west of Greenwich.
  return new Date(`${day}T00:00:00Z`).toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/**
 * Tokens per day, stacked by series. Presentational: the data comes shaped by `usageChartData`. Loaded
 * with next/dynamic by the page, so recharts only downloads when the usage tab is opened.
 */
export default function UsageChart({ data }: { data: UsageChartData }) {
  return (
    <div className="h-72 w-full text-xs" data-testid="usage-chart">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data.points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer>
          <CartesianGrid vertical={false} stroke="var(--tb-line)" />
          <XAxis
            dataKey="day"
            tickFormatter={shortDay}
            tick={{ fill: 'var(--tb-fg-subtle)' }}
            tickLine={false}
            axisLine={{ stroke: 'var(--tb-line-strong)' }}
            minTickGap={16}
          />
          <YAxis
            tickFormatter={formatCompact}
            tick={{ fill: 'var(--tb-fg-subtle)' }}
            tickLine={false}
            axisLine={false}
            width={48}
            allowDecimals={false}
          />
          <Tooltip
            cursor={{ fill: 'var(--tb-surface-muted)' }}
            labelFormatter={(label) => shortDay(String(label))}
            formatter={(value) => [`${formatCount(Number(value))} tokens`]}
            contentStyle={{
              background: 'var(--tb-surface-raised)',
              border: '1px solid var(--tb-line)',
              borderRadius: 8,
              color: 'var(--tb-fg)',
              fontSize: 12,
            }}
            labelStyle={{ color: 'var(--tb-fg)', fontWeight: 600 }}
          />
          <Legend
            iconType="circle"
            iconSize={8}
            wrapperStyle={{ paddingTop: 8 }}
            // recharts colours legend text like its series; the page's text colour keeps it readable on both themes.
            formatter={(value) => <span style={{ color: 'var(--tb-fg-muted)' }}>{String(value)}</span>}
          />
          {data.series.map((key, i) => (
            <Bar
              key={key}
              dataKey={key}
              name={key}
              stackId="tokens"
              fill={USAGE_COLORS[i % USAGE_COLORS.length]}
              isAnimationActive={false}
              maxBarSize={36}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
