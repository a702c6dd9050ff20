import type { ComponentPropsWithRef, HTMLAttributes, ReactNode } from 'react';
import { cx } from './cx';

export function Card({ className, ...props }: ComponentPropsWithRef<'section'>) {
  return (
    <section
      className={cx(
        'relative overflow-hidden rounded-xl border border-line bg-surface shadow-xs dark:shadow-none',
        className,
      )}
      {...props}
    />
  );
}

interface CardHeaderProps {
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  /** Heading level: cards sit under the page's h1. */
  as?: 'h2' | 'h3';
  id?: string;
}

export function CardHeader({ title, description, actions, as: Heading = 'h2', id }: CardHeaderProps) {
  return (
    <header className="flex flex-wrap items-start justify-between gap-x-4 gap-y-3 border-b border-line px-5 py-4">
      <div className="min-w-0">
        <Heading id={id} className="text-[15px] font-semibold text-fg">
          {title}
        </Heading>
        {description ? <p className="mt-0.5 text-sm text-fg-muted">{description}</p> : null}
      </div>
      {/* max-w-full: actions wider than a phone's card (a segmented filter) wrap inside it instead of being clipped. */}
      {actions ? <div className="flex max-w-full shrink-0 items-center gap-2">{actions}</div> : null}
    </header>
  );
}

export function CardBody({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cx('px-5 py-4', className)} {...props} />;
}

export function CardFooter({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return (
    <div
      className={cx(
        'flex flex-wrap items-center justify-end gap-2 border-t border-line bg-surface-muted/60 px-5 py-3',
        className,
      )}
      {...props}
    />
  );
}
