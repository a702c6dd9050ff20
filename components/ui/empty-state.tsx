import type { ReactNode } from 'react';
import { cx } from './cx';

interface EmptyStateProps {
  icon?: ReactNode;
  title: ReactNode;
  description?: ReactNode;
  children?: ReactNode;
  className?: string;
}

export function EmptyState({ icon, title, description, children, className }: EmptyStateProps) {
  return (
    <div className={cx('flex flex-col items-center px-6 py-12 text-center', className)}>
      {icon ? (
        <div className="mb-4 flex size-11 items-center justify-center rounded-xl bg-accent-soft text-accent-text ring-1 ring-accent/15">
          {icon}
        </div>
      ) : null}
      <h2 className="text-base font-semibold text-fg">{title}</h2>
      {description ? <p className="mt-1.5 max-w-md text-sm text-fg-muted">{description}</p> : null}
      {children ? <div className="mt-6 w-full">{children}</div> : null}
    </div>
  );
}
