import { describe, expect, it } from 'vitest';
import {
  headlineMetrics,
  joinModelName,
  modelLabel,
  modelsFromSearchParam,
  otherStepOfModel,
  splitModelName,
} from './model-choice';

describe('model names', () => {
  it('splits and joins checkpoint names', () => {
    expect(splitModelName('ada/p/m:step12')).toEqual({ model: 'ada/p/m', step: 12 });
    expect(splitModelName('ada/p/m:latest')).toEqual({ model: 'ada/p/m', step: null });
    expect(splitModelName('tuneboard/tiny-random')).toEqual({ model: 'tuneboard/tiny-random', step: null });
    expect(joinModelName({ model: 'ada/p/m', step: 3 })).toBe('ada/p/m:step3');
    expect(joinModelName(splitModelName('ada/p/m:step0'))).toBe('ada/p/m:step0');
  });

  it('reads ?model= deep links', () => {
    expect(modelsFromSearchParam([' a ', 'b', 'a', '', 'c', 'd', 'e'])).toEqual(['a', 'b', 'c', 'd']);
  });
});

const M = 'ada/p/m';

describe('otherStepOfModel', () => {
  it('prefers step 0 beside a later checkpoint', () => {
    expect(otherStepOfModel(`${M}:step3`, [`${M}:step3`], [3, 2, 1, 0], 3)).toBe(`${M}:step0`);
  });

  it('takes the previous checkpoint once step 0 is shown, then the nearest others', () => {
    expect(otherStepOfModel(`${M}:step3`, [`${M}:step3`, `${M}:step0`], [3, 2, 1, 0], 3)).toBe(`${M}:step2`);
    expect(otherStepOfModel(`${M}:step1`, [`${M}:step1`, `${M}:step0`], [3, 2, 1, 0], 3)).toBe(`${M}:step2`);
  });

  it('takes the previous checkpoint when there is no step 0, and the next one from step 0', () => {
    expect(otherStepOfModel(`${M}:step5`, [`${M}:step5`], [5, 4], 5)).toBe(`${M}:step4`);
    expect(otherStepOfModel(`${M}:step0`, [`${M}:step0`], [0, 1, 2], 2)).toBe(`${M}:step1`);
  });

  it('reads a name without a step as the latest step', () => {
    expect(otherStepOfModel(M, [M], [2, 0], 2)).toBe(`${M}:step0`);
    expect(otherStepOfModel(`${M}:step0`, [`${M}:step0`, M], [2, 1, 0], 2)).toBe(`${M}:step1`);
  });

  it('gives up when every step is shown or the step is unknown', () => {
    expect(otherStepOfModel(`${M}:step0`, [`${M}:step0`], [0], 0)).toBeNull();
    expect(otherStepOfModel(M, [M], [], null)).toBeNull();
  });
});

describe('modelLabel', () => {
  it('puts the model name first and its entity/project second', () => {
    expect(modelLabel('e2e-abc/first-project/first-model')).toEqual({
      name: 'first-model',
      scope: 'e2e-abc/first-project',
    });
    expect(modelLabel('tuneboard/tiny-random')).toEqual({ name: 'tiny-random', scope: 'tuneboard' });
    expect(modelLabel('plain')).toEqual({ name: 'plain', scope: '' });
  });
});

describe('headlineMetrics', () => {
  it('picks up to three figures of quality: val/reward, other val metrics, then train reward and loss', () => {
    expect(
      headlineMetrics({
        'train/loss': 0.4,
        'train/grad_norm': 2,
        'val/loss': 0.8,
        'train/reward': 0.6,
        'val/reward': 0.7,
        'val/token_accuracy': 0.5,
      }),
    ).toEqual([
      ['val/reward', 0.7],
      ['val/loss', 0.8],
      ['val/token_accuracy', 0.5],
    ]);
    expect(headlineMetrics({ 'train/loss': 0.4, 'train/grad_norm': 2 })).toEqual([['train/loss', 0.4]]);
    expect(headlineMetrics({})).toEqual([]);
  });
});
