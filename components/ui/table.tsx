import type { HTMLAttributes, TdHTMLAttributes, ThHTMLAttributes } from 'react';
import { cx } from './cx';

/**
 * Tables scroll sideways inside their card on narrow screens instead of squeezing columns. The wrapper
 * is positioned so that visually hidden (absolutely positioned) labels in cells are clipped with the
 * table instead of widening the whole page.
 */
export function Table({ className, ...props }: HTMLAttributes<HTMLTableElement>) {
  return (
    <div className="relative overflow-x-auto">
      <table className={cx('w-full border-collapse text-left text-sm', className)} {...props} />
    </div>
  );
}

export function Th({ className, ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return (
    <th
      scope="col"
      className={cx(
        'border-b border-line bg-surface-muted/70 px-4 py-2.5 text-xs font-medium tracking-wide whitespace-nowrap text-fg-subtle uppercase first:pl-5 last:pr-5',
        className,
      )}
      {...props}
    />
  );
}

export function Td({ className, ...props }: TdHTMLAttributes<HTMLTableCellElement>) {
  return <td className={cx('px-4 py-3 align-middle first:pl-5 last:pr-5', className)} {...props} />;
}

export function Tr({ className, ...props }: HTMLAttributes<HTMLTableRowElement>) {
  return <tr className={cx('border-b border-line last:border-b-0', className)} {...props} />;
}
