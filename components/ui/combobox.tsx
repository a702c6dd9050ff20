'use client';

import { afterHydration } from './after-hydration';
import { cx } from './cx';
import { ChevronDownIcon } from './icons';
import { CONTROL } from './input';

export interface ComboboxOption {
  value: string;
  /** What the option and, once chosen, the closed input show. */
  label: string;
  /** A second line under the label (where a model lives, a checkpoint's headline metric). */
  detail?: string;
}

export interface ComboboxGroup {
  /** Shown above its options; none for a list that needs no heading. */
  label?: string;
  options: ComboboxOption[];
}

export interface ComboboxProps {
  id: string;
  value: string;
  onChange: (value: string) => void;
  groups: ComboboxGroup[];
  /** The closed input's title: the full value where the label is a short form of it. */
  title?: string;
  placeholder: string;
  /** The accessible name of the button that opens the whole list ("Show all models"). */
  showAllLabel: string;
  /** Said when a search matches nothing. */
  emptyText: string;
  /** The wrapper's classes: its share of the row it sits in. */
  className?: string;
  disabled?: boolean;
  'data-testid'?: string;
  optionTestId?: string;
  popupTestId?: string;
}

/** The app's text control, with room for the chevron. */
export const COMBOBOX_INPUT_CLASS = cx(CONTROL, 'pr-8');

/** The label of the chosen option; the value itself when no option has it. */
export function labelOf(groups: readonly ComboboxGroup[], value: string): string {
  for (const group of groups) for (const option of group.options) if (option.value === value) return option.label;
  return value;
}

/**
 * A searchable list (combobox-popup.tsx, on Base UI): the playground's model and checkpoint pickers. Its code loads
 * after hydration; until then the chosen option is shown in the same input, read-only.
 */
export const Combobox = afterHydration<ComboboxProps>(
  () => import('./combobox-popup'),
  ({ id, value, groups, title, className, ...rest }) => (
    <div className={cx('relative min-w-0', className)}>
      <input
        id={id}
        readOnly
        value={labelOf(groups, value)}
        title={title}
        data-testid={rest['data-testid']}
        data-value={value}
        className={COMBOBOX_INPUT_CLASS}
      />
      <span className="pointer-events-none absolute inset-y-0 right-0 flex w-8 items-center justify-center text-fg-muted">
        <ChevronDownIcon className="size-4" />
      </span>
    </div>
  ),
);
