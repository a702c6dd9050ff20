import type { ComponentPropsWithRef } from 'react';
import { cx } from './cx';

/** A multi-line input with the same look and states as `Input`. */
export function Textarea({ className, ...props }: ComponentPropsWithRef<'textarea'>) {
  return (
    <textarea
      className={cx(
        'block w-full rounded-lg border border-line-strong bg-surface px-3 py-2 text-sm text-fg shadow-xs transition-[border-color,box-shadow]',
        'placeholder:text-fg-subtle focus:border-accent focus:ring-3 focus:ring-accent/20 focus:outline-none',
        'disabled:cursor-not-allowed disabled:opacity-60',
        'aria-[invalid=true]:border-danger aria-[invalid=true]:focus:ring-danger/20',
        className,
      )}
      {...props}
    />
  );
}
