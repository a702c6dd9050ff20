import { describe, expect, it } from 'vitest';
import { eventSummary, gradientStepCharts, trainingCurveCharts } from './job-events';

describe('gradientStepCharts', () => {
  it('makes one chart per numeric field, loss first, with gaps for missing values', () => {
    const charts = gradientStepCharts([
      { type: 'training_started', data: { num_sequences: 2 } },
      { type: 'gradient_step', data: { loss: 1.5, grad_norm: 2, zeta: 1 } },
      { type: 'gradient_step', data: { loss: 1.2, learning_rate: 5e-6 } },
      { type: 'training_ended', data: {} },
    ]);
    expect(charts.map((c) => c.metric)).toEqual(['loss', 'grad_norm', 'learning_rate', 'zeta']);
    expect(charts[0].series[0].points).toEqual([
      { step: 1, value: 1.5 },
      { step: 2, value: 1.2 },
    ]);
    expect(charts[1].series[0].points[1]).toEqual({ step: 2, value: null });
  });

  it("draws an SFT job's per-epoch val/<k> over <k>'s chart, joined across the epochs; a val key alone gets its own", () => {
    const step = (loss: number, val?: { loss: number; acc: number }) => ({
      type: 'gradient_step',
      data: { loss, ...(val ? { 'val/loss': val.loss, 'val/token_accuracy': val.acc } : {}) },
    });
    const charts = gradientStepCharts([
      step(3),
      step(2.5, { loss: 2.8, acc: 0.2 }),
      step(2),
      step(1.5, { loss: 2.1, acc: 0.5 }),
    ]);
    expect(charts.map((c) => c.metric)).toEqual(['loss', 'val/token_accuracy']);
    expect(charts[0].series.map((s) => [s.name, s.split, s.points.length])).toEqual([
      ['loss', 'train', 4],
      ['val/loss', 'val', 2],
    ]);
    expect(charts[0].series[1].points).toEqual([
      { step: 2, value: 2.8 },
      { step: 4, value: 2.1 },
    ]);
    expect(charts[1].series[0].points.map((p) => p.value)).toEqual([0.2, 0.5]);
  });

  it('has no charts without gradient steps', () => {
    expect(gradientStepCharts([{ type: 'training_ended', data: {} }])).toEqual([]);
  });
});

describe('trainingCurveCharts', () => {
  it('lays the gradient_step history out as a job page does: loss first, val/<k> over <k>', () => {
    const charts = trainingCurveCharts([
      {
        name: 'zeta',
        total_points: 2,
        points: [
          [1, 1],
          [2, 2],
        ],
      },
      { name: 'val/loss', total_points: 1, points: [[2, 0.5]] },
      {
        name: 'loss',
        total_points: 2,
        points: [
          [1, 0.9],
          [2, 0.7],
        ],
      },
    ]);
    expect(charts.map((c) => [c.metric, c.series.map((s) => `${s.split}:${s.name}`)])).toEqual([
      ['loss', ['train:loss', 'val:val/loss']],
      ['zeta', [':zeta']],
    ]);
    expect(charts[0].series[1].points).toEqual([{ step: 2, value: 0.5 }]);
  });
});

describe('eventSummary', () => {
  it('prints fields compactly', () => {
    expect(eventSummary({ type: 'gradient_step', data: { loss: 0.123456789, learning_rate: 5e-6 } })).toBe(
      'loss=0.12346  learning_rate=5.000e-6',
    );
    expect(eventSummary({ type: 'training_failed', data: { error_message: 'boom' } })).toBe('error_message=boom');
    expect(eventSummary({ type: 'training_ended', data: {} })).toBe('');
  });
});
