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

export function Badge({
  tone = 'neutral',
  className,
  children,
}: {
  tone?: BadgeTone;
  className?: string;
  children: ReactNode;
}) {
  return (
    <span
      className={cx(
        'inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset',
        TONES[tone],
        className,
      )}
    >
      {children}
    </span>
  );
}
