import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import { modelNotFoundError } from './chat-errors';
import { MODEL_REQUIRED_MESSAGE, parseModelName } from './model-name';

const checkpoint = (version: 'latest' | { step: number }) => ({
  kind: 'checkpoint',
  entity: 'acme',
  project: 'agents',
  name: 'agent-001',
  version,
});

describe('parseModelName (docs/contract.md §7)', () => {
  it.each([
    ['wandb-artifact:///acme/agents/agent-001', checkpoint('latest')],
    ['wandb-artifact:///acme/agents/agent-001:step25', checkpoint({ step: 25 })],
    ['wandb-artifact://acme/agents/agent-001', checkpoint('latest')],
    ['wandb-artifact://acme/agents/agent-001:step3', checkpoint({ step: 3 })],
    ['wandb-artifact:acme/agents/agent-001', checkpoint('latest')],
    ['wandb-artifact:////acme/agents/agent-001:latest', checkpoint('latest')],
    ['acme/agents/agent-001', checkpoint('latest')],
    ['acme/agents/agent-001:step0', checkpoint({ step: 0 })],
    ['acme/agents/agent-001:step007', checkpoint({ step: 7 })],
    ['acme/agents/agent-001:latest', checkpoint('latest')],
    ['/acme/agents/agent-001', checkpoint('latest')],
  ])('%s', (model, expected) => {
    expect(parseModelName(model)).toEqual(expected);
  });

  it('splits at the last colon only', () => {
    expect(parseModelName('wandb-artifact:///acme/agents/agent-001:step1:step2')).toEqual({ kind: 'unknown' });
  });

  it.each([
    'wandb-artifact:///acme/agents/agent-001:v3',
    'wandb-artifact:///acme/agents/agent-001:step',
    'wandb-artifact:///acme/agents/agent-001:step-1',
    'wandb-artifact:///acme/agents/agent-001:',
    'wandb-artifact:///acme/agents/agent-001:Latest',
    'wandb-artifact:///acme/agents',
    'wandb-artifact:///acme/agents/agent/extra',
    'wandb-artifact:///acme//agent-001',
    'wandb-artifact:///acme/agents/',
    'wandb-artifact://',
    'wandb-artifact:///acme/agents/agent-001:step99999999999999999999',
  ])('a prefixed name that can name nothing: %s', (model) => {
    expect(parseModelName(model)).toEqual({ kind: 'unknown' });
  });

  it.each([
    'OpenPipe/Qwen3-14B-Instruct',
    'Qwen/Qwen2.5-0.5B-Instruct',
    'tiny-base',
    'a/b/c/d',
    'acme/agents/agent-001:v3',
    'acme//agent-001',
    ' ',
  ])('an unprefixed string that is not entity/project/name[:version] is a base-model candidate: %s', (model) => {
    expect(parseModelName(model)).toEqual({ kind: 'base', id: model });
  });

  it.each([undefined, null, ''])('missing or empty model (%s) is the 400 of docs/contract.md §7 item 6', (model) => {
    let err: unknown;
    try {
      parseModelName(model);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(400);
    expect(e.message).toBe('A model ID must be given in `model`.');
    expect(e.message).toBe(MODEL_REQUIRED_MESSAGE);
    expect(e.type).toBe('Bad Request');
    expect(e.param).toBe('model');
  });

  it('not found answers 404 NotFoundError with the model as sent', () => {
    const e = modelNotFoundError('wandb-artifact:///acme/agents/nope:step3');
    expect(e.status).toBe(404);
    expect(e.message).toBe('The model `wandb-artifact:///acme/agents/nope:step3` does not exist.');
    expect(e.type).toBe('NotFoundError');
    expect(e.param).toBeNull();
  });
});
