'use client';

import { Combobox as BaseCombobox } from '@base-ui/react/combobox';
import { useMemo } from 'react';
import { COMBOBOX_INPUT_CLASS, type ComboboxOption, type ComboboxProps } from './combobox';
import { cx } from './cx';
import { ChevronDownIcon } from './icons';

interface ItemGroup {
  value: string;
  items: string[];
}

/**
 * A searchable list: type any part of an option's value or label to narrow it (a model's entity or project, a
 * checkpoint's step). Options wrap instead of being cut, each its label over its detail. Base UI's combobox gives
 * the ARIA pattern, keyboard and positioning.
 */
export default function ComboboxPopup({
  id,
  value,
  onChange,
  groups,
  title,
  placeholder,
  showAllLabel,
  emptyText,
  className,
  disabled,
  optionTestId,
  popupTestId,
  ...rest
}: ComboboxProps) {
  // Base UI keeps the values (strings: equality is plain); labels and details are looked up.
  const { items, options } = useMemo(() => {
    const byValue = new Map<string, ComboboxOption>();
    const itemGroups: ItemGroup[] = groups.map((group, i) => {
      for (const option of group.options) byValue.set(option.value, option);
      return { value: group.label ?? `group-${i}`, items: group.options.map((o) => o.value) };
    });
    return { items: itemGroups, options: byValue };
  }, [groups]);
  const labels = new Set(groups.map((g) => g.label).filter(Boolean));

  return (
    <BaseCombobox.Root
      items={items}
      value={value}
      onValueChange={(next) => {
        if (typeof next === 'string' && next !== '') onChange(next);
      }}
      itemToStringLabel={(item: string) => options.get(item)?.label ?? item}
      filter={(item: string, query: string) =>
        `${item} ${options.get(item)?.label ?? ''}`.toLowerCase().includes(query.trim().toLowerCase())
      }
      disabled={disabled}
      autoHighlight
    >
      <div className={cx('relative min-w-0', className)}>
        <BaseCombobox.Input
          id={id}
          title={title}
          data-testid={rest['data-testid']}
          data-value={value}
          placeholder={placeholder}
          className={COMBOBOX_INPUT_CLASS}
        />
        <BaseCombobox.Trigger
          aria-label={showAllLabel}
          className="absolute inset-y-0 right-0 flex w-8 items-center justify-center text-fg-muted hover:text-fg"
        >
          <ChevronDownIcon className="size-4" />
        </BaseCombobox.Trigger>
      </div>
      <BaseCombobox.Portal>
        <BaseCombobox.Positioner sideOffset={4} className="z-50">
          <BaseCombobox.Popup
            className="max-h-[min(24rem,var(--available-height))] w-[max(var(--anchor-width),18rem)] max-w-[calc(100vw-2rem)] overflow-y-auto rounded-lg border border-line bg-surface p-1 text-sm shadow-lg"
            data-testid={popupTestId}
          >
            <BaseCombobox.Empty className="px-3 py-2 text-fg-muted empty:hidden">{emptyText}</BaseCombobox.Empty>
            <BaseCombobox.List>
              {(group: ItemGroup) => (
                <BaseCombobox.Group key={group.value} items={group.items} className="py-1">
                  {labels.has(group.value) ? (
                    <BaseCombobox.GroupLabel className="px-2 pt-1 pb-0.5 text-[11px] font-medium tracking-wide text-fg-subtle uppercase">
                      {group.value}
                    </BaseCombobox.GroupLabel>
                  ) : null}
                  <BaseCombobox.Collection>
                    {(item: string) => {
                      const option = options.get(item);
                      return (
                        <BaseCombobox.Item
                          key={item}
                          value={item}
                          className={cx(
                            'cursor-default rounded-md px-2 py-1.5 outline-none select-none',
                            'data-[highlighted]:bg-accent-soft data-[selected]:font-semibold',
                          )}
                          data-testid={optionTestId}
                          data-value={item}
                        >
                          <span className="block leading-5 wrap-anywhere text-fg">{option?.label ?? item}</span>
                          {option?.detail ? (
                            <span className="block font-mono text-[11.5px] leading-4 wrap-anywhere text-fg-subtle">
                              {option.detail}
                            </span>
                          ) : null}
                        </BaseCombobox.Item>
                      );
                    }}
                  </BaseCombobox.Collection>
                </BaseCombobox.Group>
              )}
            </BaseCombobox.List>
          </BaseCombobox.Popup>
        </BaseCombobox.Positioner>
      </BaseCombobox.Portal>
    </BaseCombobox.Root>
  );
}
