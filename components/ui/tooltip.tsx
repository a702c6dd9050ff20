'use client';

import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { useFloatingStyle } from './floating';

interface TooltipProps {
  /** The visible label; for an icon-only control, the same words as its accessible name. */
  content: ReactNode;
  children: ReactNode;
  /** Hide it, e.g. while the control's own menu is open. */
  disabled?: boolean;
}

const HOVER_DELAY_MS = 250;

/**
 * A short label above a control, shown on hover and on keyboard focus (not after a mouse click), hidden by
 * Escape, pointer leave or blur (WCAG 1.4.13). It floats in a portal so that tables and cards do not clip it.
 * For icon-only controls: give the control an aria-label with the same words; the tooltip is what sighted
 * people read, the label what assistive technology reads.
 */
export function Tooltip({ content, children, disabled = false }: TooltipProps) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const anchor = useRef<HTMLSpanElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const style = useFloatingStyle(open && !disabled, anchor, box, 'top');

  const cancel = () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
  };
  useEffect(() => cancel, []);

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);

  const shown = open && !disabled;
  return (
    <span
      ref={anchor}
      className="inline-flex"
      onPointerEnter={(event) => {
        if (event.pointerType === 'touch') return;
        cancel();
        timer.current = setTimeout(() => setOpen(true), HOVER_DELAY_MS);
      }}
      onPointerLeave={() => {
        cancel();
        setOpen(false);
      }}
      onPointerDown={() => {
        cancel();
        setOpen(false);
      }}
      onFocus={(event) => {
        // Not while disabled: focus coming back from the control's own menu should not pop the label up.
        if (!disabled && (event.target as HTMLElement).matches(':focus-visible')) setOpen(true);
      }}
      onBlur={() => setOpen(false)}
    >
      {children}
      {shown
        ? createPortal(
            <div
              ref={box}
              id={id}
              role="tooltip"
              style={style}
              className="pointer-events-none z-50 max-w-64 rounded-md border border-line bg-surface-raised px-2 py-1 text-xs font-medium text-fg shadow-md"
            >
              {content}
            </div>,
            document.body,
          )
        : null}
    </span>
  );
}
