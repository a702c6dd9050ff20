'use client';

import { useId } from 'react';
import { cx } from './cx';

interface SegmentedControlProps<T extends string> {
  /** Names the group for assistive technology (the visible label, if any, is up to the caller). */
  label: string;
  value: T;
  options: readonly { value: T; label: string }[];
  onChange: (value: T) => void;
  size?: 'sm' | 'md';
  className?: string;
  'data-testid'?: string;
}

/**
 * A choice of a few options shown side by side. Native radio inputs underneath: arrow keys move the
 * choice, the group is announced with its name, and no ARIA roles need to be kept in sync by hand.
 * Options wrap onto another line when the control is wider than its container (a phone), so none is cut off.
 */
export function SegmentedControl<T extends string>({
  label,
  value,
  options,
  onChange,
  size = 'md',
  className,
  ...rest
}: SegmentedControlProps<T>) {
  const name = useId();
  return (
    <fieldset
      className={cx(
        'inline-flex max-w-full min-w-0 flex-wrap rounded-lg border border-line-strong bg-surface-muted p-0.5',
        className,
      )}
      data-testid={rest['data-testid']}
    >
      <legend className="sr-only">{label}</legend>
      {options.map((option) => (
        <label
          key={option.value}
          className={cx(
            // grow: only a wrapped control has room to spare; its lines fill it evenly instead of leaving a ragged gap.
            'relative flex grow cursor-pointer items-center justify-center rounded-md font-medium whitespace-nowrap transition-colors',
            'has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-offset-1 has-[:focus-visible]:outline-ring',
            size === 'sm' ? 'h-7 px-2.5 text-xs' : 'h-8 px-3 text-sm',
            option.value === value ? 'bg-surface text-fg shadow-xs ring-1 ring-line' : 'text-fg-muted hover:text-fg',
          )}
        >
          <input
            type="radio"
            name={name}
            value={option.value}
            checked={option.value === value}
            onChange={() => onChange(option.value)}
            className="sr-only"
          />
          {option.label}
        </label>
      ))}
    </fieldset>
  );
}
