import { describe, expect, it, vi } from 'vitest';
import type { DbOrTx } from './client';
import { placeholderValues, preparedQuery } from './prepared';

const handle = () => ({}) as unknown as DbOrTx;

describe('preparedQuery', () => {
  it('builds once per shape and handle, and evicts the least recently used shape past its cap', () => {
    const db = handle();
    const build = vi.fn((n: number) => ({ n }));
    const first = preparedQuery(db, 'a', () => build(1));
    expect(preparedQuery(db, 'a', () => build(2))).toBe(first);
    expect(build).toHaveBeenCalledTimes(1);
    // Another handle (a transaction) has its own entries.
    expect(preparedQuery(handle(), 'a', () => build(3))).toEqual({ n: 3 });

    for (let i = 0; i < 255; i++) preparedQuery(db, `s${i}`, () => build(i));
    preparedQuery(db, 'a', () => build(-1)); // used again: now the most recent
    preparedQuery(db, 'one more', () => build(-2)); // evicts s0, the least recently used
    build.mockClear();
    expect(preparedQuery(db, 'a', () => build(4))).toBe(first);
    preparedQuery(db, 's0', () => build(5));
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('names values to match placeholders()', () => {
    expect(placeholderValues('entity', ['x', 'y'])).toEqual({ entity0: 'x', entity1: 'y' });
  });
});
