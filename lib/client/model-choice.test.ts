import { describe, expect, it } from 'vitest';
import { joinModelName, modelsFromSearchParam, splitModelName } from './model-choice';

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
