'use client';

import { useLayoutEffect, useState, type CSSProperties, type RefObject } from 'react';

const MARGIN = 8;
const GAP = 6;

/**
 * Fixed-position style for a floating box (tooltip, menu) next to its anchor, kept inside the viewport.
 * The box lives in a portal, so it is not clipped by a scrolling table or card. Until the box has been
 * measured it is invisible; it follows the anchor while the page scrolls or resizes.
 */
export function useFloatingStyle(
  open: boolean,
  anchor: RefObject<HTMLElement | null>,
  box: RefObject<HTMLElement | null>,
  placement: 'top' | 'bottom-end',
): CSSProperties {
  const [style, setStyle] = useState<CSSProperties>({ position: 'fixed', top: 0, left: 0, visibility: 'hidden' });

  useLayoutEffect(() => {
    if (!open) return;
    function place() {
      const a = anchor.current?.getBoundingClientRect();
      const b = box.current?.getBoundingClientRect();
      if (!a || !b) return;
      const maxLeft = window.innerWidth - b.width - MARGIN;
      let left: number;
      let top: number;
      if (placement === 'top') {
        left = a.left + a.width / 2 - b.width / 2;
        top = a.top - b.height - GAP;
        if (top < MARGIN) top = a.bottom + GAP;
      } else {
        left = a.right - b.width;
        top = a.bottom + GAP / 2;
        if (top + b.height > window.innerHeight - MARGIN && a.top - b.height - GAP / 2 > MARGIN)
          top = a.top - b.height - GAP / 2;
      }
      setStyle({ position: 'fixed', top, left: Math.max(MARGIN, Math.min(left, maxLeft)), visibility: 'visible' });
    }
    place();
    window.addEventListener('scroll', place, true);
    window.addEventListener('resize', place);
    return () => {
      window.removeEventListener('scroll', place, true);
      window.removeEventListener('resize', place);
    };
  }, [open, anchor, box, placement]);

  return open ? style : { position: 'fixed', top: 0, left: 0, visibility: 'hidden' };
}
