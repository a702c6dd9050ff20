import { describe, expect, it } from 'vitest';
import { findStopString, releasableEnd, stopHoldback } from './stop-strings';

describe('findStopString (vLLM check_stop_strings, docs/contract.md §8.5)', () => {
  it('cuts at the start of the match, or after it with include_stop_str_in_output', () => {
    expect(findStopString('Hello END there', 15, ['END'], false)).toEqual({ stop: 'END', cutAt: 6 });
    expect(findStopString('Hello END there', 15, ['END'], true)).toEqual({ stop: 'END', cutAt: 9 });
  });
  it('finds a match that straddles the previous text', () => {
    // "EN" came earlier, "D" is new.
    expect(findStopString('xxEND', 1, ['END'], false)).toEqual({ stop: 'END', cutAt: 2 });
  });
  it('does not search text that was already searched', () => {
    expect(findStopString('END then more', 4, ['END'], false)).toBeNull();
  });
  it('the match that ends first wins, ties in list order (current vLLM)', () => {
    expect(findStopString('abc', 3, ['c', 'a'], false)).toEqual({ stop: 'a', cutAt: 0 });
    expect(findStopString('abc', 3, ['a', 'c'], false)).toEqual({ stop: 'a', cutAt: 0 });
    // "abc" and "bc" end together: list order; "b" ends before both.
    expect(findStopString('xabc', 3, ['abc', 'bc'], false)).toEqual({ stop: 'abc', cutAt: 1 });
    expect(findStopString('xabc', 3, ['abc', 'bc', 'b'], true)).toEqual({ stop: 'b', cutAt: 3 });
  });
  it('nothing new or no stops: no match', () => {
    expect(findStopString('END', 0, ['END'], false)).toBeNull();
    expect(findStopString('END', 3, [], false)).toBeNull();
  });
  it('a stop string at the very end needs no truncation when included', () => {
    expect(findStopString('abEND', 3, ['END'], true)).toEqual({ stop: 'END', cutAt: 5 });
  });
  it('works with astral characters', () => {
    expect(findStopString('a😀b', 1, ['😀b'], false)).toEqual({ stop: '😀b', cutAt: 1 });
  });
});

describe('holdback (docs/contract.md §8.5 streaming)', () => {
  it('is max(len(s)) − 1 code points, 0 when stop strings are included or absent', () => {
    expect(stopHoldback(['END', '\n\nUser:'], false)).toBe(6);
    expect(stopHoldback(['😀😀'], false)).toBe(1);
    expect(stopHoldback(['x'], false)).toBe(0);
    expect(stopHoldback(['END'], true)).toBe(0);
    expect(stopHoldback([], false)).toBe(0);
  });
  it('never splits a surrogate pair', () => {
    expect(releasableEnd('abc', 2)).toBe(1);
    expect(releasableEnd('a😀', 1)).toBe(1);
    expect(releasableEnd('a😀b', 2)).toBe(1);
    expect(releasableEnd('ab', 5)).toBe(0);
    expect(releasableEnd('ab', 0)).toBe(2);
  });
});
