import 'server-only';
import { isDelivering, listen, publish } from '@/lib/db/notifications';

/**
 * Wake-ups for parked claims (POST /v1/workers/claim with `wait_seconds`, lib/jobs/README.md "Worker protocol"): a claim that found
 * nothing waits here until something may have become claimable — a job was queued, or a job ended so the next job of
 * its model may run (jobs of one model run one at a time) — instead of the worker sleeping its poll back-off. Notices
 * go through lib/db/notifications (NOTIFY on PostgreSQL, so a job created by one server process wakes a claim parked
 * in another; in-process with the embedded database). A parked claim also looks again on its own every `RECHECK_MS`
 * (more often while the listener is down), so a missed notice costs latency, never a job.
 */

const CHANNEL = 'tuneboard_claims';
export const RECHECK_MS = 2000;
const RECHECK_UNDELIVERED_MS = 250;

/** The key a parked claim of a worker that also takes Tinker training clients listens on besides the queue's. */
export const QUEUE_KEY = 'queue';

type State = { waiters: Set<() => void>; listening: boolean; stopping: boolean };
const state: State = ((globalThis as Record<symbol, unknown>)[Symbol.for('tuneboard.claimWakeups')] ??= {
  waiters: new Set(),
  listening: false,
  stopping: false,
}) as State;

function wakeAll(): void {
  const all = [...state.waiters];
  for (const wake of all) wake();
}

function ensureListening(): void {
  if (state.listening) return;
  state.listening = true;
  // Any notice (or a gap, when the listener reconnected) wakes every parked claim: each looks at the queue again.
  listen(CHANNEL, wakeAll, wakeAll);
}

/** Something may have become claimable: wakes the parked claims of every server process. Never throws. */
export async function wakeClaims(): Promise<void> {
  ensureListening();
  await publish(CHANNEL, QUEUE_KEY).catch(() => wakeAll());
}

/**
 * The server is stopping (lib/runtime/server-start.ts): parked claims answer now, and no claim parks any more, so that
 * no worker's long poll holds the stopping server open for up to 25 s.
 */
export function stopParkedClaims(): void {
  state.stopping = true;
  wakeAll();
}

/** Whether claims may still park (false once the server is stopping). */
export function claimsMayPark(): boolean {
  return !state.stopping;
}

/** How many claims are parked in this process (tests check that an aborted claim leaves none behind). */
export function parkedClaims(): number {
  return state.waiters.size;
}

export interface ClaimListener {
  /** Resolves when woken (at once if that happened since `listenForClaims`), after `ms`, at the next re-check, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/**
 * Registers for wake-ups now; callers loop: listen, try to claim, wait, close. Listening before the claim attempt
 * makes a job queued between the attempt and the wait count. `extra` subscribes the same listener to another wake-up
 * source (a Tinker worker's new training clients) and returns its unsubscribe.
 */
export function listenForClaims(extra?: (wake: () => void) => () => void): ClaimListener {
  ensureListening();
  let woken = false;
  let onWake: (() => void) | null = null;
  const wakeUp = () => {
    woken = true;
    onWake?.();
  };
  state.waiters.add(wakeUp);
  const unsubscribe = extra?.(wakeUp);
  return {
    wait(ms, signal) {
      if (woken || signal?.aborted || state.stopping) return Promise.resolve();
      const limit = Math.max(0, Math.min(ms, isDelivering() ? RECHECK_MS : RECHECK_UNDELIVERED_MS));
      return new Promise<void>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', finish);
          onWake = null;
          resolve();
        };
        const timer = setTimeout(finish, limit);
        signal?.addEventListener('abort', finish, { once: true });
        onWake = finish;
      });
    },
    close() {
      onWake = null;
      state.waiters.delete(wakeUp);
      unsubscribe?.();
    },
  };
}
