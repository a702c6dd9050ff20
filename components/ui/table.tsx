import type { HTMLAttributes, TdHTMLAttributes, ThHTMLAttributes } from 'react';
import { cx } from './cx';

/**
 * Tables scroll sideways inside their card on narrow screens instead of squeezing columns. The wrapper
 * is positioned so that visually hidden (absolutely positioned) labels in cells are clipped with the
 * table instead of widening the whole page.
 *
 * `stacked`: under 640 px each row becomes a card, each cell a line of its column's label beside its value (the
 * labels come from each `Td`'s `label`), for tables whose columns a phone cannot show side by side. The header row stays in
 * the document, visually hidden, for assistive technology. A label longer than its column (a metric name such as
 * `val/exception_rate`) wraps instead of running into the value, and a value is never wider than the card.
 */
export function Table({
  className,
  stacked = false,
  ...props
}: HTMLAttributes<HTMLTableElement> & { stacked?: boolean }) {
  return (
    <div className="relative overflow-x-auto">
      <table
        className={cx(
          'w-full border-collapse text-left text-sm',
          stacked &&
            'max-sm:block max-sm:[&_tbody]:block max-sm:[&_thead]:sr-only max-sm:[&>tbody>tr]:block max-sm:[&>tbody>tr]:px-4 max-sm:[&>tbody>tr]:py-2 max-sm:[&>tbody>tr>td]:grid max-sm:[&>tbody>tr>td]:grid-cols-[6.5rem_minmax(0,1fr)] max-sm:[&>tbody>tr>td]:gap-x-3 max-sm:[&>tbody>tr>td]:px-1 max-sm:[&>tbody>tr>td]:py-1 max-sm:[&>tbody>tr>td]:text-left max-sm:[&>tbody>tr>td:first-child]:pl-1 max-sm:[&>tbody>tr>td:last-child]:pr-1 max-sm:[&>tbody>tr>td>*]:max-w-full max-sm:[&>tbody>tr>td>*]:justify-self-start',
          className,
        )}
        {...props}
      />
    </div>
  );
}

/**
 * A header may wrap between its words: a table whose columns fit on one line is laid out as before (an automatic
 * table gives every column its widest content when it has room), and one that does not fit wraps "Latest step"
 * rather than scroll its last columns out of the card.
 */
export function Th({ className, ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return (
    <th
      scope="col"
      className={cx(
        'border-b border-line bg-surface-muted/70 px-4 py-2.5 text-xs font-medium tracking-wide text-fg-subtle uppercase first:pl-5 last:pr-5',
        className,
      )}
      {...props}
    />
  );
}

/** `label`: the column's name, shown before the value when a `stacked` table is a card on a phone. */
export function Td({ className, label, ...props }: TdHTMLAttributes<HTMLTableCellElement> & { label?: string }) {
  return (
    <td
      data-label={label}
      className={cx(
        'px-4 py-3 align-middle first:pl-5 last:pr-5',
        label &&
          'max-sm:before:row-span-6 max-sm:before:pt-0.5 max-sm:before:font-sans max-sm:before:text-xs max-sm:before:font-medium max-sm:before:tracking-wide max-sm:before:text-fg-subtle max-sm:before:uppercase max-sm:before:wrap-anywhere max-sm:before:whitespace-normal max-sm:before:content-[attr(data-label)]',
        className,
      )}
      {...props}
    />
  );
}

export function Tr({ className, ...props }: HTMLAttributes<HTMLTableRowElement>) {
  return <tr className={cx('border-b border-line last:border-b-0', className)} {...props} />;
}
