'use client';

import { lazy, Suspense, useSyncExternalStore, type ComponentType, type ReactNode } from 'react';

const noSubscription = () => () => {};

/** false while the server renders and while the client hydrates; true from the render after. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

/**
 * Starts fetching the chunk as soon as this module runs in the browser (while the page hydrates, not when the
 * widget first renders), so that it is there by the time anyone can point at the widget. Not on the server: the
 * chunk must stay out of the HTML's scripts.
 */
export function preloaded<T>(load: () => Promise<T>): () => Promise<T> {
  const early = typeof window === 'undefined' ? null : load();
  return () => early ?? load();
}

/**
 * A component whose code is fetched only after the page has hydrated, with `fallback` drawn until then (on the
 * server too). For widgets whose library is heavy and whose first frame can be static: Base UI's floating
 * widgets weigh ~35 kB gzipped, which would otherwise count against every route's first-load budget
 * (bench:ui, ≤ 250 kB) for a tooltip or a menu that nobody uses in the first second.
 */
export function afterHydration<P extends object>(
  load: () => Promise<{ default: ComponentType<P> }>,
  fallback: (props: P) => ReactNode,
): ComponentType<P> {
  const Lazy = lazy(preloaded(load));
  function AfterHydration(props: P) {
    const hydrated = useHydrated();
    if (!hydrated) return fallback(props);
    return (
      <Suspense fallback={fallback(props)}>
        <Lazy {...props} />
      </Suspense>
    );
  }
  return AfterHydration;
}
