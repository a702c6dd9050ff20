import { describe, expect, it } from 'vitest';
import { checkpointNames, inferenceNames, playgroundHref } from './inference-names';

const model = { id: '0b7c6a4e-0000-4000-8000-000000000001', entity: 'ada', project: 'p', name: 'm' };

describe('inferenceNames', () => {
  it('lists every naming form when there is a step', () => {
    expect(inferenceNames(model, 3).map((n) => n.value)).toEqual([
      'ada/p/m',
      'ada/p/m:step3',
      'wandb-artifact:///ada/p/m:step3',
      'wandb-artifact:///ada/p/m',
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

describe('checkpointNames', () => {
  it('offers every form that reaches the latest step', () => {
    expect(checkpointNames({ ...model, latest_step: 3 }, 3)).toEqual([
      { label: 'Step 3', value: 'ada/p/m:step3' },
      { label: 'Step 3 artifact', value: 'wandb-artifact:///ada/p/m:step3' },
      { label: 'Latest', value: 'ada/p/m' },
      { label: 'Latest artifact', value: 'wandb-artifact:///ada/p/m' },
      { label: 'Model id (latest)', value: model.id },
    ]);
  });

  it('offers only the pinned forms for an older step, since the others name a later checkpoint', () => {
    expect(checkpointNames({ ...model, latest_step: 3 }, 0).map((n) => n.value)).toEqual([
      'ada/p/m:step0',
      'wandb-artifact:///ada/p/m:step0',
    ]);
  });
});
