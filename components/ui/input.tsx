import type { ComponentPropsWithRef } from 'react';
import { cx } from './cx';
import { ChevronDownIcon } from './icons';

/** The look of every text control (inputs, selects, the playground's model combobox). */
export const CONTROL = cx(
  'h-9 w-full rounded-lg border border-line-strong bg-surface px-3 text-sm text-fg shadow-xs transition-[border-color,box-shadow]',
  'placeholder:text-fg-subtle focus:border-accent focus:ring-3 focus:ring-accent/20 focus:outline-none',
  'disabled:cursor-not-allowed disabled:opacity-60',
  'aria-[invalid=true]:border-danger aria-[invalid=true]:focus:ring-danger/20',
);

export function Input({ className, ...props }: ComponentPropsWithRef<'input'>) {
  return <input className={cx(CONTROL, className)} {...props} />;
}

export function Select({ className, children, ...props }: ComponentPropsWithRef<'select'>) {
  return (
    <span className={cx('relative block', className)}>
      <select className={cx(CONTROL, 'cursor-pointer appearance-none pr-9')} {...props}>
        {children}
      </select>
      <ChevronDownIcon className="pointer-events-none absolute top-1/2 right-3 size-4 -translate-y-1/2 text-fg-subtle" />
    </span>
  );
}
