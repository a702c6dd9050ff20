'use client';

import { afterHydration } from '@/components/ui/after-hydration';
import { ChevronDownIcon } from '@/components/ui/icons';
import { modelLabel } from '@/lib/client/model-choice';

export interface ModelComboboxProps {
  id: string;
  value: string;
  onChange: (value: string) => void;
  baseModels: readonly string[];
  trainedModels: readonly string[];
  disabled?: boolean;
}

export const COMBOBOX_INPUT_CLASS =
  'h-9 w-full rounded-lg border border-line-strong bg-surface pr-8 pl-3 text-sm text-fg shadow-xs outline-none placeholder:text-fg-subtle focus:border-accent focus:ring-2 focus:ring-accent/25 disabled:opacity-55';

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
