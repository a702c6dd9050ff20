import { describe, expect, it } from 'vitest';
import { holdOutValidation } from './validation-split';

describe('holdOutValidation', () => {
  it('holds out the middle of each of `count` equal stretches, both sides in file order', () => {
    const { train, validation } = holdOutValidation([...'abcdefghij'], 0.3);
    expect(validation).toEqual(['b', 'f', 'i']);
    expect(train).toEqual([...'acdeghj']);
  });

  it('holds nothing out without a share or with fewer than two examples, and never every example', () => {
    expect(holdOutValidation([1, 2, 3], 0)).toEqual({ train: [1, 2, 3], validation: [] });
    expect(holdOutValidation([1], 0.5)).toEqual({ train: [1], validation: [] });
    expect(holdOutValidation([1, 2], 0.5)).toEqual({ train: [1], validation: [2] });
  });
});
