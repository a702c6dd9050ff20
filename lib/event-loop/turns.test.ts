import { describe, expect, it } from 'vitest';
import { config } from '@/lib/config';
import { inTurn, inTurnAsync, waitingForTurn } from './turns';

// With the default budget (TUNEBOARD_REQUEST_WORK_PER_TURN_MS unset: these tests share their process with others, so
// they leave the environment alone). TurnBudget's own tests cover the budget with a clock of their own.
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function drain() {
  while (waitingForTurn() > 0) await nextTurn();
  await nextTurn();
}

/** Work that takes longer than a turn's whole budget. */
function busy(ran: string[], name: string) {
  return () => {
    const until = performance.now() + config.requestWorkPerTurnMs + 1;
    while (performance.now() < until);
    ran.push(name);
  };
}

describe('request work per event-loop turn', () => {
  it('has a budget', () => {
    expect(config.requestWorkPerTurnMs).toBeGreaterThan(0);
  });

  it('runs work past the budget in later turns, in the order offered, with the rest of the event loop between', async () => {
    await drain();
    const ran: string[] = [];
    for (let i = 0; i < 3; i++) inTurn(busy(ran, `w${i}`));
    expect(ran).toEqual(['w0']);
    expect(waitingForTurn()).toBe(2);
    // Queued after the two shares of this turn were scheduled (the budget's reset and the first drain): it runs before
    // the third, which waits for the next turn.
    setImmediate(() => ran.push('other'));
    await drain();
    expect(ran).toEqual(['w0', 'w1', 'other', 'w2']);
  });

  it('inTurnAsync settles as the work does, failures included, whichever turn it runs in', async () => {
    await drain();
    const ran: string[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) =>
        inTurnAsync(async () => {
          busy(ran, `w${i}`)();
          if (i === 2) throw new Error(`work ${i} failed`);
          return `work ${i}`;
        }),
      ),
    );
    expect(ran).toEqual(['w0', 'w1', 'w2', 'w3']);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'work 0',
      'work 1',
      'work 2 failed',
      'work 3',
    ]);
  });
});
