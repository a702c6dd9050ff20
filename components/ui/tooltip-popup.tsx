'use client';

import { Tooltip as BaseTooltip } from '@base-ui/react/tooltip';
import type { ReactNode, RefObject } from 'react';

/**
 * The label of a Tooltip (tooltip.tsx), which owns when it shows: Base UI places it against the wrapper (in a
 * portal, so tables and cards do not clip it, flipped to stay on screen). For icon-only controls: give the control
 * an aria-label with the same words; the tooltip is what sighted people read, the label what assistive technology
 * reads.
 */
export default function TooltipPopup({
  content,
  anchor,
}: {
  content: ReactNode;
  anchor: RefObject<HTMLElement | null>;
}) {
  return (
    <BaseTooltip.Root open>
      <BaseTooltip.Portal>
        <BaseTooltip.Positioner anchor={anchor} side="top" sideOffset={6} collisionPadding={8} className="z-50">
          <BaseTooltip.Popup
            role="tooltip"
            className="pointer-events-none max-w-64 rounded-md border border-line bg-surface-raised px-2 py-1 text-xs font-medium text-fg shadow-md"
          >
            {content}
          </BaseTooltip.Popup>
        </BaseTooltip.Positioner>
      </BaseTooltip.Portal>
    </BaseTooltip.Root>
  );
}
