import type { ReactNode } from 'react';
import { cx } from './cx';

export type BadgeTone = 'neutral' | 'accent' | 'success' | 'warning' | 'danger' | 'info';

const TONES: Record<BadgeTone, string> = {
  neutral: 'bg-surface-muted text-fg-muted ring-line',
  accent: 'bg-accent-soft text-accent-text ring-accent/20',
  success: 'bg-success-soft text-success-text ring-success-text/20',
  warning: 'bg-warning-soft text-warning-text ring-warning-text/20',
  danger: 'bg-danger-soft text-danger-text ring-danger-text/20',
  info: 'bg-info-soft text-info-text ring-info-text/20',
};

/**
 * `wrap`: the text may break onto further lines (at a name's hyphens), for a name in a table column that must not hold
 * the table wider than its card. One line is the same pill (the radius is half its 20 px height), two lines a
 * rounded box rather than a pinched one.
 */
export function Badge({
  tone = 'neutral',
  wrap = false,
  className,
  children,
}: {
  tone?: BadgeTone;
  wrap?: boolean;
  className?: string;
  children: ReactNode;
}) {
  return (
    <span
      className={cx(
        'inline-flex items-center gap-1 px-2 py-0.5 text-xs font-medium ring-1 ring-inset',
        wrap ? 'rounded-[0.625rem]' : 'rounded-full whitespace-nowrap',
        TONES[tone],
        className,
      )}
    >
      {children}
    </span>
  );
}
