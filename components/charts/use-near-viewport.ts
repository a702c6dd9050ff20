'use client';

import { useEffect, useState, type RefObject } from 'react';

/**
 * Charts waiting to be drawn in the background, drawn one per idle period, in the order they asked (top of the page
 * first). Module state: every chart card of the page shares the one queue.
 */
const waiting: (() => void)[] = [];
let draining = false;

const whenIdle = (run: () => void) =>
  typeof requestIdleCallback === 'function' ? requestIdleCallback(run, { timeout: 500 }) : setTimeout(run, 50);

function drainOne() {
  const next = waiting.shift();
  if (!next) {
    draining = false;
    return;
  }
  next();
  // The next chart after the browser has painted this one and handled any input that arrived meanwhile.
  whenIdle(drainOne);
}

function enqueue(draw: () => void): () => void {
  waiting.push(draw);
  if (!draining) {
    draining = true;
    whenIdle(drainOne);
  }
  return () => {
    const i = waiting.indexOf(draw);
    if (i !== -1) waiting.splice(i, 1);
  };
}

/**
 * Whether a chart should be drawn: at once when it is in view, otherwise when the page is idle, one chart per idle
 * period. A page of twenty charts of eight runs each spent most of a second of its main thread drawing charts
 * nobody had scrolled to yet (bench:ui, issue 44: about 90 ms a chart of eight runs), before the ones in view could
 * show; now those in view draw first, and the rest follow without holding the main thread for more than one chart
 * at a time, so they are drawn by the time a person scrolls to them. Once true, stays true. Without
 * IntersectionObserver (an old browser, a test environment), everything draws at once.
 */
export function useNearViewport(ref: RefObject<Element | null>): boolean {
  const [near, setNear] = useState(false);
  useEffect(() => {
    if (near) return;
    const element = ref.current;
    if (!element || typeof IntersectionObserver === 'undefined') {
      setNear(true);
      return;
    }
    const draw = () => setNear(true);
    let leave: (() => void) | null = null;
    let first = true;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        leave?.();
        observer.disconnect();
        draw();
      } else if (first) leave = enqueue(draw);
      first = false;
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      leave?.();
    };
  }, [ref, near]);
  return near;
}
