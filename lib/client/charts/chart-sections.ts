import type { ChartSpec } from './chart-series';

export type ChartSectionId = 'reward' | 'policy' | 'data';

export const CHART_SECTIONS: { id: ChartSectionId; title: string; description: string }[] = [
  {
    id: 'reward',
    title: 'Reward',
    description: 'What the run is judged by: reward, its spread, and every metric you logged with the trajectories.',
  },
  {
    id: 'policy',
    title: 'Policy health',
    description:
      'Loss, entropy, gradient norm and the share of groups without a reward spread (nothing to learn from).',
  },
  { id: 'data', title: 'Data', description: 'Counts of what each job trained on.' },
];

const POLICY = /^(loss|policy_loss|entropy|grad_norm|learning_rate|zero_advantage_share|kl.*|token_accuracy)$/;
const DATA = /^(num_.*|ignored\/.*)$/;

/** Which section a chart belongs to, by its metric name (the part after `{split}/`). */
export function chartSection(metric: string): ChartSectionId {
  if (POLICY.test(metric)) return 'policy';
  if (DATA.test(metric)) return 'data';
  return 'reward';
}

/**
 * A chart whose every point, in every split, has one value (a single point included): a chart would say
 * nothing a number does not.
 */
export function constantValue(chart: ChartSpec): number | null {
  let value: number | null = null;
  let n = 0;
  for (const s of chart.series)
    for (const p of s.points) {
      if (p.value === null) continue;
      if (value !== null && p.value !== value) return null;
      value = p.value;
      n += 1;
    }
  return n >= 1 ? value : null;
}

/** Below this many points per series a smoothed line misses the values it is drawn from: draw them raw. */
export const MIN_POINTS_TO_SMOOTH = 20;

export function effectiveSmoothing(chart: ChartSpec, smoothing: number): number {
  const longest = Math.max(0, ...chart.series.map((s) => s.points.length));
  return longest < MIN_POINTS_TO_SMOOTH ? 0 : smoothing;
}

/**
 * Charts that vary, and the value of each that does not (a flat chart says nothing a number does not), except
 * those `keep` names: they stay charts whatever their values.
 */
export function foldConstants(charts: readonly ChartSpec[], keep: (metric: string) => boolean = () => false) {
  const constants: { metric: string; value: number }[] = [];
  const varying: ChartSpec[] = [];
  for (const c of charts) {
    const v = keep(c.metric) ? null : constantValue(c);
    if (v === null) varying.push(c);
    else constants.push({ metric: c.metric, value: v });
  }
  return { charts: varying, constants };
}

/** Charts by section, constants pulled out of each into one summary row. */
export function sectionCharts(charts: readonly ChartSpec[]) {
  return CHART_SECTIONS.map((section) => ({
    ...section,
    // Reward stays a chart whatever its length: its points are how a person opens the trajectories.
    ...foldConstants(
      charts.filter((c) => chartSection(c.metric) === section.id),
      (metric) => metric === 'reward',
    ),
  })).filter((s) => s.charts.length > 0 || s.constants.length > 0);
}
