'use client';

import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { PlusIcon, TrashIcon } from '@/components/ui/icons';
import { Textarea } from '@/components/ui/textarea';
import { describedBy } from '@/components/ui/field';
import { MAX_SCORERS, newScorerDraft, SCORER_TYPES, type ScorerDraft, type ScorerType } from '@/lib/client/evals/evals';

const TYPE_LABELS: Record<ScorerType, string> = {
  exact_match: 'Exact match',
  contains: 'Contains',
  regex: 'Regular expression',
  numeric: 'Numeric',
  json_schema: 'JSON schema',
  judge: 'Judge model',
};

const TYPE_HINTS: Record<ScorerType, string> = {
  exact_match: 'Passes when the answer equals the reference.',
  contains: 'Passes when the answer contains the reference (every item of a list).',
  regex: 'Passes when the answer matches; {reference} stands for the escaped reference.',
  numeric: "Passes when the answer's last number is within the tolerance of the reference.",
  json_schema: 'Passes when the answer is JSON valid against the schema.',
  judge: 'A model reads the rubric, the prompt and the answer, and says PASS or FAIL.',
};

interface ScorersEditorProps {
  idPrefix: string;
  scorers: ScorerDraft[];
  onChange: (scorers: ScorerDraft[]) => void;
  /** Errors keyed like the API's (`scorers.0.pattern`). */
  errors: Readonly<Record<string, string>>;
  /** Models a judge may be (any chat model Tuneboard serves). */
  judgeModels: readonly string[];
  disabled?: boolean;
}

/** 1–8 scorers, each a type with its own settings; errors sit on the field they name. */
export function ScorersEditor({ idPrefix, scorers, onChange, errors, judgeModels, disabled }: ScorersEditorProps) {
  const update = (i: number, patch: Partial<ScorerDraft>) =>
    onChange(scorers.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <fieldset className="flex flex-col gap-3" data-testid="scorers-editor" disabled={disabled}>
      <legend className="mb-2 text-sm font-medium text-fg">Scorers</legend>
      {errors.scorers ? (
        <p role="alert" className="text-xs font-medium text-danger-text">
          {errors.scorers}
        </p>
      ) : null}
      {scorers.map((s, i) => {
        const id = `${idPrefix}-scorer-${i}`;
        const err = (field: string) => errors[`scorers.${i}.${field}`];
        return (
          <div
            key={i}
            className="grid gap-3 rounded-lg border border-line bg-surface-muted/40 p-3 sm:grid-cols-2"
            data-testid="scorer"
          >
            <SelectField
              id={`${id}-type`}
              label={`Scorer ${i + 1}`}
              hint={TYPE_HINTS[s.type]}
              value={s.type}
              onChange={(e) => update(i, { ...newScorerDraft(e.target.value as ScorerType), name: s.name })}
              error={err('type')}
              data-testid="scorer-type"
            >
              {SCORER_TYPES.map((t) => (
                <option key={t} value={t}>
                  {TYPE_LABELS[t]}
                </option>
              ))}
            </SelectField>
            <div className="flex items-start gap-2">
              <TextField
                id={`${id}-name`}
                label="Name"
                optional
                fieldClassName="flex-1"
                placeholder={s.type}
                value={s.name}
                onChange={(e) => update(i, { name: e.target.value })}
                error={err('name')}
                hint="Names the metric: eval/<set>/<name>."
              />
              <Button
                variant="ghost"
                size="sm"
                className="mt-6"
                aria-label={`Remove scorer ${i + 1}`}
                disabled={scorers.length <= 1}
                onClick={() => onChange(scorers.filter((_, j) => j !== i))}
              >
                <TrashIcon className="size-4" />
              </Button>
            </div>
            {s.type === 'exact_match' || s.type === 'contains' ? (
              <label className="inline-flex cursor-pointer items-center gap-2 text-sm sm:col-span-2">
                <input
                  type="checkbox"
                  className="size-4 accent-[var(--tb-accent)]"
                  checked={s.flag}
                  onChange={(e) => update(i, { flag: e.target.checked })}
                />
                {s.type === 'exact_match' ? 'Normalize (trim, collapse whitespace, ignore case)' : 'Case-sensitive'}
              </label>
            ) : null}
            {s.type === 'regex' ? (
              <>
                <TextField
                  id={`${id}-pattern`}
                  label="Pattern"
                  className="font-mono"
                  value={s.pattern}
                  onChange={(e) => update(i, { pattern: e.target.value })}
                  error={err('pattern')}
                  placeholder="^\s*{reference}\s*$"
                  data-testid="scorer-pattern"
                />
                <TextField
                  id={`${id}-flags`}
                  label="Flags"
                  optional
                  className="font-mono"
                  value={s.flags}
                  onChange={(e) => update(i, { flags: e.target.value })}
                  error={err('flags')}
                  placeholder="i"
                />
              </>
            ) : null}
            {s.type === 'numeric' ? (
              <>
                <TextField
                  id={`${id}-tolerance`}
                  label="Tolerance"
                  optional
                  inputMode="decimal"
                  value={s.tolerance}
                  onChange={(e) => update(i, { tolerance: e.target.value })}
                  error={err('tolerance')}
                  placeholder="0"
                  hint="Absolute."
                />
                <TextField
                  id={`${id}-relative`}
                  label="Relative tolerance"
                  optional
                  inputMode="decimal"
                  value={s.relative}
                  onChange={(e) => update(i, { relative: e.target.value })}
                  error={err('relative')}
                  placeholder="0.01"
                />
              </>
            ) : null}
            {s.type === 'json_schema' ? (
              <TextArea
                id={`${id}-schema`}
                label="JSON schema"
                value={s.schema}
                onChange={(v) => update(i, { schema: v })}
                error={err('schema')}
                placeholder='{"type": "object", "required": ["answer"]}'
                mono
              />
            ) : null}
            {s.type === 'judge' ? (
              <>
                <SelectField
                  id={`${id}-model`}
                  label="Judge model"
                  value={s.model}
                  onChange={(e) => update(i, { model: e.target.value })}
                  error={err('model')}
                  data-testid="scorer-judge-model"
                >
                  <option value="">Pick a model…</option>
                  {/* A model from a saved setting that is no longer listed stays selectable: the server says why. */}
                  {s.model && !judgeModels.includes(s.model) ? <option value={s.model}>{s.model}</option> : null}
                  {judgeModels.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </SelectField>
                <TextArea
                  id={`${id}-rubric`}
                  label="Rubric"
                  value={s.rubric}
                  onChange={(v) => update(i, { rubric: v })}
                  error={err('rubric')}
                  placeholder="PASS if the answer is correct and says why; FAIL otherwise."
                />
              </>
            ) : null}
          </div>
        );
      })}
      <div>
        <Button
          variant="secondary"
          size="sm"
          disabled={scorers.length >= MAX_SCORERS}
          onClick={() => onChange([...scorers, newScorerDraft('contains')])}
          data-testid="add-scorer"
        >
          <PlusIcon className="size-4" />
          Add scorer
        </Button>
      </div>
    </fieldset>
  );
}

function TextArea({
  id,
  label,
  value,
  onChange,
  error,
  placeholder,
  mono = false,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  placeholder?: string;
  mono?: boolean;
}) {
  return (
    <div className="flex flex-col gap-1.5 sm:col-span-2">
      <label htmlFor={id} className="text-sm font-medium text-fg">
        {label}
      </label>
      <Textarea
        id={id}
        rows={3}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={placeholder}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, undefined, error)}
        className={mono ? 'font-mono text-xs' : undefined}
      />
      {error ? (
        <p id={`${id}-error`} className="text-xs font-medium text-danger-text">
          {error}
        </p>
      ) : null}
    </div>
  );
}
