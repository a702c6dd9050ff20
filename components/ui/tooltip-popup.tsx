'use client';

import { Tooltip as BaseTooltip } from '@base-ui/react/tooltip';
import type { TooltipProps } from './tooltip';

const HOVER_DELAY_MS = 250;

/**
 * A short label above a control, shown on hover and on keyboard focus, hidden by Escape, pointer leave or blur
 * (WCAG 1.4.13); Base UI places it (in a portal, so tables and cards do not clip it, flipped to stay on screen).
 * For icon-only controls: give the control an aria-label with the same words; the tooltip is what sighted people
 * read, the label what assistive technology reads.
 */
export default function TooltipPopup({
  content,
  children,
  disabled = false,
  defaultOpen = false,
}: TooltipProps & { defaultOpen?: boolean }) {
  return (
    <BaseTooltip.Root disabled={disabled} defaultOpen={defaultOpen}>
      {/* A wrapper, not the control itself: the control keeps its own element, ref and handlers. */}
      <BaseTooltip.Trigger delay={HOVER_DELAY_MS} render={<span className="inline-flex" />}>
        {children}
      </BaseTooltip.Trigger>
      <BaseTooltip.Portal>
        <BaseTooltip.Positioner side="top" sideOffset={6} collisionPadding={8} className="z-50">
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
