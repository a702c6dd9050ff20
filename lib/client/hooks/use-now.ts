'use client';

import { useSyncExternalStore } from 'react';

const TICK_MS = 30_000;

function subscribe(onChange: () => void): () => void {
  const timer = setInterval(onChange, TICK_MS);
  return () => clearInterval(timer);
}

// Rounded so that the snapshot is stable between ticks, as useSyncExternalStore requires.
const snapshot = () => Math.floor(Date.now() / TICK_MS) * TICK_MS;
const serverSnapshot = () => null;

/**
 * The current time, refreshed every 30 s, or null during server rendering and hydration: time-relative
 * text ("5 minutes ago", "expired") would otherwise differ between the server's HTML and the browser.
 */
export function useNow(): number | null {
  return useSyncExternalStore(subscribe, snapshot, serverSnapshot);
}

const SECOND = 1000;
function subscribeSeconds(onChange: () => void): () => void {
  const timer = setInterval(onChange, SECOND);
  return () => clearInterval(timer);
}
const secondSnapshot = () => Math.floor(Date.now() / SECOND) * SECOND;

/** useNow, ticking every second while `ticking` (a running job's elapsed time), else every 30 s. */
export function useNowEverySecond(ticking: boolean): number | null {
  return useSyncExternalStore(
    ticking ? subscribeSeconds : subscribe,
    ticking ? secondSnapshot : snapshot,
    serverSnapshot,
  );
}

/** Time left for a running job, from its pace so far; null until one step has finished. */
export function remainingMs(elapsedMs: number, completed: number, total: number | null): number | null {
  if (total === null || completed < 1 || completed >= total) return null;
  return (elapsedMs / completed) * (total - completed);
}
