'use client';

import { lazy, Suspense, useState, type ReactNode } from 'react';
import { preloaded, useHydrated } from './after-hydration';

export interface TooltipProps {
  /** The visible label; for an icon-only control, the same words as its accessible name. */
  content: ReactNode;
  children: ReactNode;
  /** Hide it, e.g. while the control's own menu is open. */
  disabled?: boolean;
}

const TooltipPopup = lazy(preloaded(() => import('./tooltip-popup')));

/**
 * A short label above a control on hover and keyboard focus (tooltip-popup.tsx, on Base UI). Its code loads after
 * hydration, off the first-load budget; until then the control is drawn in the same wrapper, which notes a hover
 * or keyboard focus so that the label opens at once when the code arrives instead of waiting for the next one.
 */
export function Tooltip({ content, children, disabled = false }: TooltipProps) {
  const hydrated = useHydrated();
  const [wanted, setWanted] = useState(false);
  const placeholder = (
    <span
      className="inline-flex"
      onPointerEnter={(event) => setWanted(event.pointerType !== 'touch')}
      onPointerLeave={() => setWanted(false)}
      onFocus={(event) => setWanted((event.target as HTMLElement).matches(':focus-visible'))}
      onBlur={() => setWanted(false)}
    >
      {children}
    </span>
  );
  if (!hydrated) return placeholder;
  return (
    <Suspense fallback={placeholder}>
      <TooltipPopup content={content} disabled={disabled} defaultOpen={wanted && !disabled}>
        {children}
      </TooltipPopup>
    </Suspense>
  );
}
