'use client';

import { afterHydration } from '@/components/ui/after-hydration';
import { cx } from '@/components/ui/cx';
import { ChevronDownIcon } from '@/components/ui/icons';
import { CONTROL } from '@/components/ui/input';
import { modelLabel } from '@/lib/client/model-choice';

export interface ModelComboboxProps {
  id: string;
  value: string;
  onChange: (value: string) => void;
  baseModels: readonly string[];
  trainedModels: readonly string[];
  disabled?: boolean;
}

/** The app's text control, with room for the chevron. */
export const COMBOBOX_INPUT_CLASS = cx(CONTROL, 'pr-8');

/** What the closed input shows: a trained model's own name (the pane's heading above names it in full). */
export function inputLabel(model: string): string {
  return modelLabel(model).name || model;
}

/**
 * The model of a pane, searchable (model-combobox-popup.tsx, on Base UI). Its code loads after hydration; until
 * then the chosen model is shown in the same input, read-only.
 */
export const ModelCombobox = afterHydration<ModelComboboxProps>(
  () => import('./model-combobox-popup'),
  ({ id, value }) => (
    <div className="relative min-w-0 flex-[3_1_10rem]">
      <input
        id={id}
        readOnly
        value={inputLabel(value)}
        title={value}
        data-testid="model-select"
        data-value={value}
        className={COMBOBOX_INPUT_CLASS}
      />
      <span className="pointer-events-none absolute inset-y-0 right-0 flex w-8 items-center justify-center text-fg-muted">
        <ChevronDownIcon className="size-4" />
      </span>
    </div>
  ),
);
