import 'server-only';
import { isDelivering, listen, publish } from '@/lib/db/notifications';

/**
 * Wake-ups between the parts of a Tinker request's life that wait on each other (docs/tinker.md §2.2, §3.2): a worker's
 * long poll waits for requests of its training clients (`w:<worker id>`) or a new training client (`new`); a client's
 * retrieve_future waits for its result (`r:<request id>`). They go through the database's notifications
 * (lib/db/notifications.ts: NOTIFY on PostgreSQL, so a request taken by one server process wakes a poll held by
 * another; in-process with the embedded database), which is what keeps a request's submit-to-result overhead at a few
 * milliseconds instead of a polling interval. Every waiter also looks again on its own every `RECHECK_MS` (more often
 * while the listener is down), so a notice that was missed costs latency, never a lost request.
 */

const CHANNEL = 'tuneboard_tinker';
const RECHECK_MS = 2000;
const RECHECK_UNDELIVERED_MS = 250;

type State = { waiters: Map<string, Set<(value?: unknown) => void>>; listening: boolean };
const state: State = ((globalThis as Record<symbol, unknown>)[Symbol.for('tuneboard.tinkerWakeups')] ??= {
  waiters: new Map(),
  listening: false,
}) as State;

function deliver(key: string, value?: unknown): void {
  const set = state.waiters.get(key);
  if (!set) return;
  state.waiters.delete(key);
  for (const wake of set) wake(value);
}

function wakeAll(): void {
  const all = [...state.waiters.values()];
  state.waiters.clear();
  for (const set of all) for (const wake of set) wake();
}

function ensureListening(): void {
  if (state.listening) return;
  state.listening = true;
  // A gap (the listener reconnected) may have swallowed a notice: every waiter looks again.
  listen(CHANNEL, deliver, wakeAll);
}

/** Wakes whoever waits on these keys, in every server process. */
export async function wake(...keys: string[]): Promise<void> {
  ensureListening();
  for (const key of new Set(keys)) await publish(CHANNEL, key);
}

/**
 * wake(), handing this process's listeners of `key` what they would read next (a finished request's row, committed),
 * so that they need not read it back; listeners in other processes are woken as by wake() and read it.
 */
export async function wakeWith(key: string, value: unknown): Promise<void> {
  ensureListening();
  deliver(key, value);
  await publish(CHANNEL, key);
}

/** A registration for wake-ups of some keys, made before the state it waits on is read (see `listenFor`). */
export interface Listener {
  /**
   * Resolves once one of the keys was woken (at once if that happened since `listenFor`), when `ms` have passed, or at
   * the next re-check, whichever comes first; `signal` ends it early (the caller's client went away). Its value: what
   * a wakeWith() in this process handed over, else undefined.
   */
  wait(ms: number, signal?: AbortSignal): Promise<unknown>;
  /** Unregisters (always call it: a listener that is never woken would stay in the map). */
  close(): void;
}

/**
 * Registers for wake-ups of `keys` now. Callers loop: listen, check, wait, close. Listening before the check is what
 * makes a wake-up that lands between the check and the wait count: registered after the check (as waiting alone
 * would), such a wake-up found no one and the caller slept a whole re-check (2 s) with its answer already there.
 */
export function listenFor(keys: string[]): Listener {
  ensureListening();
  let woken = false;
  let handed: unknown;
  let onWake: (() => void) | null = null;
  const wakeUp = (value?: unknown) => {
    woken = true;
    if (value !== undefined) handed = value;
    onWake?.();
  };
  for (const key of keys) {
    let set = state.waiters.get(key);
    if (!set) state.waiters.set(key, (set = new Set()));
    set.add(wakeUp);
  }
  return {
    wait(ms, signal) {
      if (woken || signal?.aborted) return Promise.resolve(handed);
      const limit = Math.max(0, Math.min(ms, isDelivering() ? RECHECK_MS : RECHECK_UNDELIVERED_MS));
      return new Promise<unknown>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', finish);
          onWake = null;
          resolve(handed);
        };
        const timer = setTimeout(finish, limit);
        signal?.addEventListener('abort', finish, { once: true });
        onWake = finish;
      });
    },
    close() {
      onWake = null;
      for (const key of keys) {
        const set = state.waiters.get(key);
        if (!set) continue;
        set.delete(wakeUp);
        if (set.size === 0) state.waiters.delete(key);
      }
    },
  };
}

/**
 * Calls `fn` once, at the first wake-up of one of `keys` (in any server process); the returned function unsubscribes.
 * For waits that are not Tinker's own: a parked job claim of a worker that also takes training clients
 * (lib/jobs/server/queue.ts claimJob) ends when a new training client waits, so the worker polls for it at once.
 */
export function onWake(keys: string[], fn: () => void): () => void {
  ensureListening();
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    fn();
  };
  for (const key of keys) {
    let set = state.waiters.get(key);
    if (!set) state.waiters.set(key, (set = new Set()));
    set.add(once);
  }
  return () => {
    for (const key of keys) {
      const set = state.waiters.get(key);
      if (!set) continue;
      set.delete(once);
      if (set.size === 0) state.waiters.delete(key);
    }
  };
}

export const requestKey = (requestId: string) => `r:${requestId}`;
export const workerKey = (workerId: string) => `w:${workerId}`;
export const NEW_CLIENT_KEY = 'new';
