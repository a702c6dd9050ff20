import { describe, expect, it } from 'vitest';
import { TurnBudget } from './turn-budget';

/** A fake event loop: a clock that messages advance, and the callbacks queued for after the next poll. */
function fakeLoop() {
  let clock = 0;
  let afterPoll: (() => void)[] = [];
  return {
    now: () => clock,
    advance: (ms: number) => (clock += ms),
    afterPoll: (fn: () => void) => void afterPoll.push(fn),
    /** Ends the turn: what was queued for after the poll runs, then its microtasks. */
    async turn() {
      const due = afterPoll;
      afterPoll = [];
      for (const fn of due) fn();
      for (let i = 0; i < 20; i++) await Promise.resolve();
    },
  };
}

describe('TurnBudget', () => {
  it('hands messages on at once while the turn is under budget', () => {
    const loop = fakeLoop();
    const handled: number[] = [];
    const budget = new TurnBudget<number>((n) => (handled.push(n), loop.advance(1)), 10, loop.now, loop.afterPoll);
    for (let i = 0; i < 5; i++) budget.push(i);
    expect(handled).toEqual([0, 1, 2, 3, 4]);
    expect(budget.waiting).toBe(0);
  });

  it('past the budget, keeps the rest in order for later turns, a budget at a time', async () => {
    const loop = fakeLoop();
    const handled: number[] = [];
    // Each message costs 4 ms of the request thread: the third starts at 8 ms, under the 10 ms budget, the fourth
    // at 12.
    const budget = new TurnBudget<number>((n) => (handled.push(n), loop.advance(4)), 10, loop.now, loop.afterPoll);
    for (let i = 0; i < 10; i++) budget.push(i);
    expect(handled).toEqual([0, 1, 2]);
    expect(budget.waiting).toBe(7);
    // Arriving while others wait: behind them, even in a fresh turn.
    await loop.turn();
    budget.push(10);
    expect(handled).toEqual([0, 1, 2, 3, 4, 5]);
    await loop.turn();
    expect(handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    await loop.turn();
    await loop.turn();
    expect(handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(budget.waiting).toBe(0);
    // The backlog gone, a new turn hands messages on at once again.
    await loop.turn();
    budget.push(11);
    expect(handled.at(-1)).toBe(11);
  });

  it('keeps draining after a message whose handler throws', async () => {
    const loop = fakeLoop();
    const handled: number[] = [];
    const errors: unknown[] = [];
    const budget = new TurnBudget<number>(
      (n) => {
        loop.advance(6);
        if (n === 3) throw new Error('bad message');
        handled.push(n);
      },
      10,
      loop.now,
      loop.afterPoll,
    );
    const original = globalThis.queueMicrotask;
    globalThis.queueMicrotask = (fn) =>
      original(() => {
        try {
          fn();
        } catch (err) {
          errors.push(err);
        }
      });
    try {
      for (let i = 0; i < 6; i++) budget.push(i);
      for (let i = 0; i < 6; i++) await loop.turn();
    } finally {
      globalThis.queueMicrotask = original;
    }
    expect(handled).toEqual([0, 1, 2, 4, 5]);
    expect(errors).toHaveLength(1);
  });
});
