/**
 * Hands work that arrives in bursts to the request thread a bounded amount per event-loop turn. Used for the
 * engine threads' messages (lib/inference/pool.ts) and for request handlers and embedded-database answers
 * (lib/event-loop/turns.ts).
 *
 * Every message from an inference thread is one generation's new tokens, and what they set off runs in the same
 * turn: its SSE chunks are encoded and written to the client's socket. While the request thread is busy or off
 * the CPU, the threads go on generating, and their messages pile up: Node delivers every queued message in one
 * turn. bench:gateway's health-under-load run saw 813 of them in a single turn (50 streams, 16 steps each) and
 * 200 ms without a timer firing, so a health probe or an API request that arrived meanwhile waited all that time.
 *
 * So once the items of one turn have taken `budgetMs` (counting what each one set off, which has run by the
 * time the next item is handled), the rest wait, in order, and are handed on `budgetMs` at a time with a
 * turn of the event loop in between, in which sockets are read and timers fire. Tokens then reach their clients
 * a turn later, not fewer of them. Nothing waits while the turn is under budget.
 */
export class TurnBudget<T> {
  private readonly backlog: T[] = [];
  private turnStarted: number | null = null;
  private draining = false;

  constructor(
    private readonly handle: (item: T) => void,
    private readonly budgetMs = 10,
    private readonly now: () => number = () => performance.now(),
    /** Runs a callback after the event loop's next poll for I/O (setImmediate). */
    private readonly afterPoll: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {}

  /** Messages waiting for a later turn. */
  get waiting(): number {
    return this.backlog.length;
  }

  push(item: T): void {
    if (this.backlog.length > 0) {
      this.backlog.push(item);
      return;
    }
    const now = this.now();
    if (this.turnStarted === null) {
      this.turnStarted = now;
      this.afterPoll(() => (this.turnStarted = null));
    } else if (now - this.turnStarted >= this.budgetMs) {
      this.backlog.push(item);
      this.drainLater();
      return;
    }
    this.handle(item);
  }

  private drainLater(): void {
    if (this.draining) return;
    this.draining = true;
    this.afterPoll(() => void this.drain());
  }

  private async drain(): Promise<void> {
    const started = this.now();
    while (this.backlog.length > 0 && this.now() - started < this.budgetMs) {
      const item = this.backlog.shift()!;
      try {
        this.handle(item);
      } catch (err) {
        // As a throwing message listener would have (an uncaught exception), without stopping the drain.
        queueMicrotask(() => {
          throw err;
        });
      }
      // Lets what the message set off (its chunks encoded and written) start before the clock is read again. That
      // takes a few promise hops, some of which run after the read, so a drain may overrun its budget by about a
      // message's work; all of it has run before the next turn.
      await Promise.resolve();
    }
    this.draining = false;
    if (this.backlog.length > 0) this.drainLater();
  }
}
