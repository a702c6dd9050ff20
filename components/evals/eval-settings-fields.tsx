'use client';

import { SelectField, TextField } from '@/components/ui/field';
import type { EvalSet } from '@/lib/client/evals/evals';

export interface SettingsDraft {
  evalSetId: string;
  temperature: string;
  maxTokens: string;
  n: string;
}

/** A set version as an option: project/name vN (examples). */
export function evalSetOptionLabel(set: EvalSet): string {
  return `${set.project}/${set.name} v${set.version} (${set.num_examples.toLocaleString('en')} examples)`;
}

/** The eval set, sampling and samples per example: what a run and a model's auto-eval share. */
export function EvalSetField({
  id,
  sets,
  value,
  onChange,
  error,
}: {
  id: string;
  sets: readonly EvalSet[];
  value: string;
  onChange: (id: string) => void;
  error?: string;
}) {
  return (
    <SelectField
      id={id}
      label="Eval set"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={error}
      hint={sets.length === 0 ? 'Upload a set on the Evals page first.' : undefined}
      data-testid="eval-set-select"
    >
      <option value="">Pick a set…</option>
      {value && !sets.some((s) => s.id === value) ? <option value={value}>{value}</option> : null}
      {sets.map((s) => (
        <option key={s.id} value={s.id}>
          {evalSetOptionLabel(s)}
        </option>
      ))}
    </SelectField>
  );
}

export function SamplingFields({
  idPrefix,
  draft,
  onChange,
  errors,
}: {
  idPrefix: string;
  draft: SettingsDraft;
  onChange: (patch: Partial<SettingsDraft>) => void;
  errors: Readonly<Record<string, string>>;
}) {
  return (
    <fieldset className="grid gap-3 sm:grid-cols-3">
      <legend className="mb-2 text-sm font-medium text-fg">Sampling</legend>
      <TextField
        id={`${idPrefix}-temperature`}
        label="Temperature"
        inputMode="decimal"
        value={draft.temperature}
        onChange={(e) => onChange({ temperature: e.target.value })}
        error={errors['sampling.temperature']}
        hint="0 is greedy: the same answer every time."
        data-testid="eval-temperature"
      />
      <TextField
        id={`${idPrefix}-max-tokens`}
        label="Max tokens"
        inputMode="numeric"
        value={draft.maxTokens}
        onChange={(e) => onChange({ maxTokens: e.target.value })}
        error={errors['sampling.max_tokens']}
        data-testid="eval-max-tokens"
      />
      <TextField
        id={`${idPrefix}-n`}
        label="Samples per example"
        inputMode="numeric"
        value={draft.n}
        onChange={(e) => onChange({ n: e.target.value })}
        error={errors.n}
        hint="n, 1–16."
        data-testid="eval-n"
      />
    </fieldset>
  );
}
