import { describe, expect, it } from 'vitest';
import { inferenceNames, playgroundHref } from './inference-names';

const model = { id: '0b7c6a4e-0000-4000-8000-000000000001', entity: 'ada', project: 'p', name: 'm' };

describe('inferenceNames', () => {
  it('lists every naming form when there is a step', () => {
    expect(inferenceNames(model, 3).map((n) => n.value)).toEqual([
      'ada/p/m',
      'ada/p/m:step3',
      'wandb-artifact:///ada/p/m:step3',
      model.id,
    ]);
  });

  it('leaves out step forms before the first checkpoint', () => {
    expect(inferenceNames(model, null).map((n) => n.label)).toEqual(['Latest', 'Model id']);
  });

  it('builds the playground link with the name encoded', () => {
    expect(playgroundHref(model, 2)).toBe('/playground?model=ada%2Fp%2Fm%3Astep2');
  });
});
