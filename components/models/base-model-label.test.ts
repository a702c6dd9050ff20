import { describe, expect, it } from 'vitest';
import { baseModelFacts, formatParameterCount } from './base-model-label';

describe('formatParameterCount', () => {
  it('rounds like model cards do', () => {
    expect(formatParameterCount(9_830_400)).toBe('9.8M');
    expect(formatParameterCount(596_049_920)).toBe('596M');
    expect(formatParameterCount(8_030_261_248)).toBe('8.0B');
    expect(formatParameterCount(812)).toBe('812');
  });
});

describe('baseModelFacts', () => {
  it('says size, context, trainer and server, and leaves out what is unknown', () => {
    const base = {
      id: 'x',
      backend: 'hf' as const,
      description: null,
      available: true,
      unavailable_reason: null,
      download: null,
    };
    expect(
      baseModelFacts({
        ...base,
        trained_by: 'python-worker',
        served_by: 'vllm',
        parameters: 596_049_920,
        context_length: 40960,
      }),
    ).toBe('596M params · 40,960 ctx · trains: Python worker · serves: vLLM');
    expect(
      baseModelFacts({
        ...base,
        backend: 'upstream',
        trained_by: null,
        served_by: 'vllm',
        parameters: null,
        context_length: null,
      }),
    ).toBe('trains: not trainable here · serves: vLLM');
  });
});
