'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Select } from '@/components/ui/input';
import { evalSetsQuery } from '@/lib/client/queries/evals';
import type { EvalSettings } from '@/lib/client/evals/evals';
import { evalSetOptionLabel } from './eval-settings-fields';

/** The scorers the fine-tune form offers without settings of their own; the model page sets any. */
const QUICK_SCORERS = [
  { value: 'exact_match', label: 'exact match' },
  { value: 'contains', label: 'contains the reference' },
  { value: 'numeric', label: 'the same number' },
] as const;

export type SftEval = Pick<EvalSettings, 'eval_set_id' | 'scorers'> | null;

/**
 * "Evaluate each checkpoint on <eval set>": the SFT job's optional `eval` (the model's auto-eval, set before the job
 * starts). Loaded after hydration, so the fine-tune form's first load does not carry the eval schemas; its sets are
 * fetched when the box is ticked.
 */
export default function SftEvalField({
  onChange,
  disabled,
  error,
}: {
  onChange: (value: SftEval) => void;
  disabled?: boolean;
  error?: string;
}) {
  const [on, setOn] = useState(false);
  const [setId, setSetId] = useState('');
  const [scorer, setScorer] = useState<(typeof QUICK_SCORERS)[number]['value']>('exact_match');
  const sets = useQuery({ ...evalSetsQuery(), enabled: on });
  const list = sets.data?.data ?? [];
  const chosen = setId || list[0]?.id || '';
  useEffect(() => {
    onChange(on && chosen ? { eval_set_id: chosen, scorers: [{ type: scorer }] } : null);
  }, [on, chosen, scorer, onChange]);

  return (
    <div className="flex flex-col gap-2 sm:col-span-2" data-testid="sft-eval">
      <label className="inline-flex cursor-pointer items-center gap-2 text-sm font-medium text-fg">
        <input
          type="checkbox"
          className="size-4 accent-[var(--tb-accent)]"
          checked={on}
          disabled={disabled}
          onChange={(e) => setOn(e.target.checked)}
          data-testid="sft-eval-toggle"
        />
        Evaluate each checkpoint on an eval set
      </label>
      {on ? (
        sets.isError ? (
          <p role="alert" className="text-xs text-danger-text">
            Could not load the eval sets: {sets.error.message}
          </p>
        ) : sets.isSuccess && list.length === 0 ? (
          <p className="text-xs text-fg-muted">No eval set yet: upload one on the Evals page.</p>
        ) : (
          <div className="grid gap-2 sm:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]">
            <Select
              aria-label="Eval set"
              value={chosen}
              onChange={(e) => setSetId(e.target.value)}
              disabled={disabled || !sets.isSuccess}
              aria-invalid={error ? true : undefined}
              data-testid="sft-eval-set"
            >
              {list.map((s) => (
                <option key={s.id} value={s.id}>
                  {evalSetOptionLabel(s)}
                </option>
              ))}
            </Select>
            <Select
              aria-label="Scored by"
              value={scorer}
              onChange={(e) => setScorer(e.target.value as typeof scorer)}
              disabled={disabled}
            >
              {QUICK_SCORERS.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </Select>
          </div>
        )
      ) : null}
      <p className="text-xs text-fg-subtle">
        Each new checkpoint is scored as it is saved, its mean charted as eval/&lt;set&gt;/&lt;scorer&gt; beside the
        loss.
      </p>
      {error ? (
        <p role="alert" className="text-xs font-medium text-danger-text">
          {error}
        </p>
      ) : null}
    </div>
  );
}
