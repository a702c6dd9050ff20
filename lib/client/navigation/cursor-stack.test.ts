import { describe, expect, it } from 'vitest';
import { currentCursor, FIRST_PAGE, pageNumber, popCursor, pushCursor } from './cursor-stack';

describe('cursor stack', () => {
  it('goes forward by pushing the last id and back by popping', () => {
    let s = FIRST_PAGE;
    expect(currentCursor(s)).toBeUndefined();
    s = pushCursor(s, 'a');
    s = pushCursor(s, 'b');
    expect(currentCursor(s)).toBe('b');
    expect(pageNumber(s)).toBe(3);
    s = popCursor(s);
    expect(currentCursor(s)).toBe('a');
    s = popCursor(popCursor(s));
    expect(s).toEqual([undefined]);
  });

  it('ignores an empty cursor (an empty page has no last id)', () => {
    expect(pushCursor(FIRST_PAGE, '')).toBe(FIRST_PAGE);
  });
});
