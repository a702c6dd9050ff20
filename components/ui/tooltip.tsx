'use client';

import { lazy, Suspense, useEffect, useRef, useState, type ReactNode } from 'react';
import { preloaded } from './after-hydration';

export interface TooltipProps {
  /** The visible label; for an icon-only control, the same words as its accessible name. */
  content: ReactNode;
  children: ReactNode;
  /** Hide it, e.g. while the control's own menu is open. */
  disabled?: boolean;
}

const TooltipPopup = lazy(preloaded(() => import('./tooltip-popup')));

const HOVER_DELAY_MS = 250;

/**
 * A short label above a control on hover and keyboard focus, hidden by Escape, pointer leave, a press or blur
 * (WCAG 1.4.13). The wrapper and the control inside it are the same elements from the server's HTML on: only the
 * label (tooltip-popup.tsx: Base UI's positioning, in a portal) is code loaded after hydration, off the first-load
 * budget. Swapping the control for one inside a loaded trigger, as an earlier version did, re-created the control
 * just after hydration, and a click landing in that moment was lost (a link that did not navigate). A hover or
 * focus that comes before the code opens the label as soon as it arrives.
 */
export function Tooltip({ content, children, disabled = false }: TooltipProps) {
  const anchor = useRef<HTMLSpanElement>(null);
  const [open, setOpen] = useState(false);
  const timer = useRef<number | undefined>(undefined);
  const show = (delay: number) => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setOpen(true), delay);
  };
  const hide = () => {
    window.clearTimeout(timer.current);
    setOpen(false);
  };
  useEffect(() => {
    // A pointer already resting on the control, or keyboard focus already in it, when the page hydrates sent its
    // events before there were handlers: open for it now, as a later hover or focus would.
    const el = anchor.current;
    if (el?.matches(':hover')) show(HOVER_DELAY_MS);
    else if (el?.querySelector(':focus-visible')) show(0);
    return () => window.clearTimeout(timer.current);
    // Once, on mount: later hovers and focus come through the handlers.
  }, []);
  useEffect(() => {
    if (!open) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [open]);

  return (
    <span
      ref={anchor}
      className="inline-flex"
      onPointerEnter={(event) => {
        if (event.pointerType !== 'touch') show(HOVER_DELAY_MS);
      }}
      onPointerLeave={hide}
      onPointerDown={hide}
      onFocus={(event) => {
        if ((event.target as HTMLElement).matches(':focus-visible')) show(0);
      }}
      onBlur={hide}
    >
      {children}
      {open && !disabled ? (
        <Suspense fallback={null}>
          <TooltipPopup content={content} anchor={anchor} />
        </Suspense>
      ) : null}
    </span>
  );
}
