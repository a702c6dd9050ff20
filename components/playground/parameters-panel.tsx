'use client';

import type { ReactNode } from 'react';
import { Button } from '@/components/ui/button';
import { cx } from '@/components/ui/cx';
import { describedBy, SelectField, TextField } from '@/components/ui/field';
import { AlertCircleIcon, RefreshIcon } from '@/components/ui/icons';
import { Textarea } from '@/components/ui/textarea';
import {
  DEFAULT_PARAMS,
  randomSeed,
  type ChatParams,
  type ParamErrors,
  type ResponseFormatKind,
} from '@/lib/client/chat/chat-request';

interface ParametersPanelProps {
  params: ChatParams;
  errors: ParamErrors;
  onChange: (next: ChatParams) => void;
  /** Replaces the temperature's hint, to say why it has the value it has. */
  temperatureHint?: string;
  /** Back to the defaults; the page decides what they are (greedy beside checkpoints). */
  onReset?: () => void;
}

type NumberKey = Exclude<keyof ChatParams, 'logprobs' | 'response_format' | 'json_schema' | 'stop'>;

const NUMBER_FIELDS: { key: NumberKey; label: string; hint: string; step: string }[] = [
  { key: 'temperature', label: 'Temperature', hint: '0–2; 0 is greedy', step: '0.1' },
  { key: 'top_p', label: 'Top p', hint: '0–1', step: '0.05' },
  { key: 'top_k', label: 'Top k', hint: '-1 or empty: off', step: '1' },
  { key: 'min_p', label: 'Min p', hint: '0–1', step: '0.01' },
  { key: 'max_tokens', label: 'Max tokens', hint: 'Per answer', step: '1' },
  { key: 'n', label: 'Choices (n)', hint: '1–8 answers', step: '1' },
];

const PENALTY_FIELDS: { key: NumberKey; label: string; hint: string; step: string }[] = [
  { key: 'presence_penalty', label: 'Presence', hint: '-2–2', step: '0.1' },
  { key: 'frequency_penalty', label: 'Frequency', hint: '-2–2', step: '0.1' },
  { key: 'repetition_penalty', label: 'Repetition', hint: '1 is off', step: '0.05' },
];

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <fieldset className="flex flex-col gap-4 border-t border-line px-4 py-4 first:border-t-0">
      <legend className="float-left mb-1 w-full text-xs font-semibold tracking-wide text-fg-subtle uppercase">
        {title}
      </legend>
      {children}
    </fieldset>
  );
}

/** Sampling parameters shared by every model in the comparison; empty fields use the server's default. */
export function ParametersPanel({ params, errors, onChange, temperatureHint, onReset }: ParametersPanelProps) {
  const set = <K extends keyof ChatParams>(key: K, value: ChatParams[K]) => onChange({ ...params, [key]: value });

  return (
    <div className="flex flex-col" data-testid="parameters-panel">
      <Section title="Sampling">
        <div className="grid grid-cols-2 gap-3">
          {NUMBER_FIELDS.map(({ key, label, hint, step }) => (
            <TextField
              key={key}
              id={`param-${key}`}
              name={key}
              label={label}
              hint={key === 'temperature' && temperatureHint ? temperatureHint : hint}
              value={params[key]}
              onChange={(event) => set(key, event.target.value)}
              error={errors[key]}
              inputMode="decimal"
              placeholder="default"
              autoComplete="off"
              step={step}
              className="h-8 text-[13px] tabular-nums"
            />
          ))}
        </div>
        <div className="flex items-end gap-2">
          <TextField
            id="param-seed"
            name="seed"
            label="Seed"
            hint="Same seed, same answer"
            value={params.seed}
            onChange={(event) => set('seed', event.target.value)}
            error={errors.seed}
            inputMode="numeric"
            placeholder="random"
            autoComplete="off"
            fieldClassName="flex-1"
            className="h-8 text-[13px] tabular-nums"
          />
          <Button
            variant="secondary"
            size="sm"
            className="mb-[22px] w-8 px-0"
            aria-label="New random seed"
            title="New random seed"
            onClick={() => set('seed', String(randomSeed()))}
          >
            <RefreshIcon className="size-3.5" />
          </Button>
        </div>
        <div className="flex flex-col gap-1.5">
          <label htmlFor="param-stop" className="text-sm font-medium text-fg">
            Stop sequences
          </label>
          <Textarea
            id="param-stop"
            rows={2}
            value={params.stop}
            onChange={(event) => set('stop', event.target.value)}
            aria-describedby="param-stop-hint"
            className="font-mono text-[12.5px]"
            spellCheck={false}
          />
          <p id="param-stop-hint" className="text-xs text-fg-subtle">
            One per line.
          </p>
        </div>
      </Section>

      <Section title="Penalties">
        <div className="grid grid-cols-3 gap-2">
          {PENALTY_FIELDS.map(({ key, label, hint, step }) => (
            <TextField
              key={key}
              id={`param-${key}`}
              name={key}
              label={label}
              hint={key === 'temperature' && temperatureHint ? temperatureHint : hint}
              value={params[key]}
              onChange={(event) => set(key, event.target.value)}
              error={errors[key]}
              inputMode="decimal"
              placeholder="off"
              autoComplete="off"
              step={step}
              aria-label={`${label} penalty`}
              className="h-8 px-2 text-[13px] tabular-nums"
            />
          ))}
        </div>
      </Section>

      <Section title="Logprobs">
        <label className="flex items-center gap-2 text-sm text-fg">
          <input
            type="checkbox"
            checked={params.logprobs}
            onChange={(event) => set('logprobs', event.target.checked)}
            className="size-4 rounded border-line-strong accent-accent"
          />
          Return logprobs
        </label>
        <TextField
          id="param-top_logprobs"
          name="top_logprobs"
          label="Top logprobs"
          hint="Alternatives per token, 0–20"
          value={params.top_logprobs}
          onChange={(event) => set('top_logprobs', event.target.value)}
          error={errors.top_logprobs}
          disabled={!params.logprobs}
          inputMode="numeric"
          autoComplete="off"
          className="h-8 text-[13px] tabular-nums"
        />
      </Section>

      <Section title="Response format">
        <SelectField
          id="param-response_format"
          label="Format"
          value={params.response_format}
          onChange={(event) => set('response_format', event.target.value as ResponseFormatKind)}
        >
          <option value="text">Text</option>
          <option value="json_object">JSON object</option>
          <option value="json_schema">JSON schema</option>
        </SelectField>
        {params.response_format === 'json_schema' ? (
          <div className="flex flex-col gap-1.5">
            <div className="flex items-baseline justify-between gap-2">
              <label htmlFor="param-json_schema" className="text-sm font-medium text-fg">
                JSON schema
              </label>
              <Button
                variant="ghost"
                size="sm"
                className="h-6 px-1.5 text-xs"
                disabled={Boolean(errors.json_schema)}
                onClick={() => set('json_schema', JSON.stringify(JSON.parse(params.json_schema), null, 2))}
              >
                Format
              </Button>
            </div>
            <Textarea
              id="param-json_schema"
              rows={9}
              value={params.json_schema}
              onChange={(event) => set('json_schema', event.target.value)}
              aria-invalid={errors.json_schema ? true : undefined}
              aria-describedby={describedBy('param-json_schema', true, errors.json_schema)}
              className="font-mono text-[12px] leading-relaxed"
              spellCheck={false}
              data-testid="json-schema-editor"
            />
            <p id="param-json_schema-hint" className="text-xs text-fg-subtle">
              The answer is constrained to match it.
            </p>
            {errors.json_schema ? (
              <p id="param-json_schema-error" className="flex items-start gap-1.5 text-xs font-medium text-danger-text">
                <AlertCircleIcon className="mt-px size-3.5 shrink-0" />
                <span>{errors.json_schema}</span>
              </p>
            ) : null}
          </div>
        ) : null}
      </Section>

      <div className={cx('border-t border-line px-4 py-3')}>
        <Button
          variant="ghost"
          size="sm"
          onClick={() => (onReset ? onReset() : onChange({ ...DEFAULT_PARAMS, seed: params.seed }))}
        >
          Reset to defaults
        </Button>
      </div>
    </div>
  );
}
