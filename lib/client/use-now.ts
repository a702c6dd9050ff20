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
