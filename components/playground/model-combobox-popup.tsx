'use client';

import { Combobox } from '@base-ui/react/combobox';
import { useMemo } from 'react';
import { cx } from '@/components/ui/cx';
import { ChevronDownIcon } from '@/components/ui/icons';
import { modelLabel } from '@/lib/client/model-choice';
import { COMBOBOX_INPUT_CLASS, inputLabel, type ModelComboboxProps } from './model-combobox';

interface ModelGroup {
  value: string;
  items: string[];
}

/**
 * The model of a pane, searchable: type any part of a name (entity, project, model) to narrow the list. Options
 * wrap instead of being cut, each a trained model's own name over its entity/project. Base UI's combobox gives the
 * ARIA pattern, keyboard and positioning.
 */
export default function ModelComboboxPopup({
  id,
  value,
  onChange,
  baseModels,
  trainedModels,
  disabled,
}: ModelComboboxProps) {
  const groups = useMemo<ModelGroup[]>(() => {
    const known = baseModels.includes(value) || trainedModels.includes(value);
    return [
      // A name in neither list (a hand-edited link) stays choosable, so that the server can say what is wrong.
      ...(known ? [] : [{ value: 'Current', items: [value] }]),
      { value: 'Base models', items: [...baseModels] },
      ...(trainedModels.length > 0 ? [{ value: 'Your models', items: [...trainedModels] }] : []),
    ];
  }, [baseModels, trainedModels, value]);

  return (
    <Combobox.Root
      items={groups}
      value={value}
      onValueChange={(next) => {
        if (typeof next === 'string' && next !== '') onChange(next);
      }}
      itemToStringLabel={inputLabel}
      // Matches anywhere in the full name, so "support" finds every model of that project.
      filter={(item: string, query: string) => item.toLowerCase().includes(query.trim().toLowerCase())}
      disabled={disabled}
      autoHighlight
    >
      <div className="relative min-w-0 flex-[3_1_10rem]">
        <Combobox.Input
          id={id}
          title={value}
          data-testid="model-select"
          data-value={value}
          placeholder="Search models…"
          className={COMBOBOX_INPUT_CLASS}
        />
        <Combobox.Trigger
          aria-label="Show all models"
          className="absolute inset-y-0 right-0 flex w-8 items-center justify-center text-fg-muted hover:text-fg"
        >
          <ChevronDownIcon className="size-4" />
        </Combobox.Trigger>
      </div>
      <Combobox.Portal>
        <Combobox.Positioner sideOffset={4} className="z-50">
          <Combobox.Popup
            className="max-h-[min(24rem,var(--available-height))] w-[max(var(--anchor-width),18rem)] max-w-[calc(100vw-2rem)] overflow-y-auto rounded-lg border border-line bg-surface p-1 text-sm shadow-lg"
            data-testid="model-options"
          >
            <Combobox.Empty className="px-3 py-2 text-fg-muted empty:hidden">No model matches</Combobox.Empty>
            <Combobox.List>
              {(group: ModelGroup) => (
                <Combobox.Group key={group.value} items={group.items} className="py-1">
                  <Combobox.GroupLabel className="px-2 pt-1 pb-0.5 text-[11px] font-medium tracking-wide text-fg-subtle uppercase">
                    {group.value}
                  </Combobox.GroupLabel>
                  <Combobox.Collection>
                    {(item: string) => {
                      const { name, scope } = modelLabel(item);
                      return (
                        <Combobox.Item
                          key={item}
                          value={item}
                          className={cx(
                            'cursor-default rounded-md px-2 py-1.5 outline-none select-none',
                            'data-[highlighted]:bg-accent-soft data-[selected]:font-semibold',
                          )}
                          data-testid="model-option"
                          data-value={item}
                        >
                          <span className="block leading-5 wrap-anywhere text-fg">{name || item}</span>
                          {scope ? (
                            <span className="block font-mono text-[11.5px] leading-4 wrap-anywhere text-fg-subtle">
                              {scope}
                            </span>
                          ) : null}
                        </Combobox.Item>
                      );
                    }}
                  </Combobox.Collection>
                </Combobox.Group>
              )}
            </Combobox.List>
          </Combobox.Popup>
        </Combobox.Positioner>
      </Combobox.Portal>
    </Combobox.Root>
  );
}
