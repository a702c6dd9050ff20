import { describe, expect, it } from 'vitest';
import {
  formatCompact,
  OTHER_SERIES,
  usageChartData,
  usageDays,
  usageTable,
  usageTotals,
  type UsageRow,
} from './usage';

const row = (
  project: string,
  model: string,
  day: string,
  requests: number,
  prompt: number,
  completion: number,
): UsageRow => ({
  entity: 'ada',
  project,
  model,
  day,
  requests,
  prompt_tokens: prompt,
  completion_tokens: completion,
});

const rows = [
  row('inference', 'tuneboard/tiny-random', '2026-03-01', 2, 10, 20),
  row('inference', 'tuneboard/tiny-random', '2026-03-03', 1, 5, 5),
  row('inference', 'ada/p/m:step2', '2026-03-03', 4, 100, 100),
  row('evals', 'tuneboard/tiny-random', '2026-03-02', 1, 1, 1),
];

describe('usage aggregation', () => {
  it('sums everything', () => {
    expect(usageTotals(rows)).toEqual({ requests: 8, prompt_tokens: 116, completion_tokens: 126, total_tokens: 242 });
    expect(usageTotals([])).toEqual({ requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('groups the table by project and model, most tokens first', () => {
    expect(usageTable(rows)).toEqual([
      {
        project: 'inference',
        model: 'ada/p/m:step2',
        last_day: '2026-03-03',
        requests: 4,
        prompt_tokens: 100,
        completion_tokens: 100,
        total_tokens: 200,
      },
      {
        project: 'inference',
        model: 'tuneboard/tiny-random',
        last_day: '2026-03-03',
        requests: 3,
        prompt_tokens: 15,
        completion_tokens: 25,
        total_tokens: 40,
      },
      {
        project: 'evals',
        model: 'tuneboard/tiny-random',
        last_day: '2026-03-02',
        requests: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        total_tokens: 2,
      },
    ]);
  });

  it('lists the window’s days, across a month end', () => {
    expect(usageDays('2026-03-02', 3)).toEqual(['2026-02-28', '2026-03-01', '2026-03-02']);
  });

  it('stacks tokens per day by model with real zeros on quiet days', () => {
    const chart = usageChartData(rows, { today: '2026-03-04', days: 5, groupBy: 'model' });
    expect(chart.series).toEqual(['ada/p/m:step2', 'tuneboard/tiny-random']);
    expect(chart.points).toEqual([
      { day: '2026-02-28', 'ada/p/m:step2': 0, 'tuneboard/tiny-random': 0 },
      { day: '2026-03-01', 'ada/p/m:step2': 0, 'tuneboard/tiny-random': 30 },
      { day: '2026-03-02', 'ada/p/m:step2': 0, 'tuneboard/tiny-random': 2 },
      { day: '2026-03-03', 'ada/p/m:step2': 200, 'tuneboard/tiny-random': 10 },
      { day: '2026-03-04', 'ada/p/m:step2': 0, 'tuneboard/tiny-random': 0 },
    ]);
  });

  it('groups by project and folds the smallest groups into Other', () => {
    const chart = usageChartData(rows, { today: '2026-03-03', days: 3, groupBy: 'project' });
    expect(chart.series).toEqual(['inference', 'evals']);
    const capped = usageChartData(rows, { today: '2026-03-03', days: 3, groupBy: 'model', maxSeries: 1 });
    expect(capped.series).toEqual([OTHER_SERIES]);
    expect(capped.points.at(-1)).toEqual({ day: '2026-03-03', [OTHER_SERIES]: 210 });
  });

  it('ignores rows outside the window', () => {
    const chart = usageChartData(rows, { today: '2026-03-02', days: 1, groupBy: 'model' });
    expect(chart.points).toEqual([{ day: '2026-03-02', 'ada/p/m:step2': 0, 'tuneboard/tiny-random': 2 }]);
  });

  it('formats axis values compactly', () => {
    expect(formatCompact(1234)).toBe('1.2K');
  });
});
