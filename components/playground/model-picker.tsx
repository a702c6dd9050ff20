'use client';

import { useQuery } from '@tanstack/react-query';
import { Badge } from '@/components/ui/badge';
import { useMemo } from 'react';
import { Select } from '@/components/ui/input';
import { ModelCombobox } from './model-combobox';
import { headlineMetrics, joinModelName, modelLabel, splitModelName } from '@/lib/client/model-choice';
import { checkpointPickerQuery } from '@/lib/client/query-keys';
import { formatNumber } from '@/lib/client/trajectory-view';
import type { ModelSummaryDto } from '@/lib/schemas/models';

interface ModelPickerProps {
  /** The chat `model` string: a base id, `entity/project/name` or `entity/project/name:stepN`. */
  value: string;
  onChange: (value: string) => void;
  baseModels: string[];
  /** Trained models by inference name (`entity/project/name`) with their record, for the checkpoint list. */
  trainedModels: Map<string, ModelSummaryDto>;
  /** Distinguishes the labels of several pickers on one page ("Model 2"). */
  label: string;
  idPrefix: string;
  disabled?: boolean;
}

/**
 * What a pane holds, readable however narrow the pane: the model's name (wrapping, never cut) and the step,
 * with entity/project below it; the full name is the title. Sits above the two selects, whose closed state
 * cannot wrap.
 */
export function PaneModelHeading({
  value,
  trainedModels,
}: {
  value: string;
  trainedModels: Map<string, ModelSummaryDto>;
}) {
  const { model, step } = splitModelName(value);
  const trained = trainedModels.get(model);
  const { name, scope } = modelLabel(model);
  // The same query as the checkpoint select below: no request of its own.
  const checkpoints = useQuery({ ...checkpointPickerQuery(trained?.id ?? ''), enabled: Boolean(trained) });
  const shownStep = step ?? trained?.latest_step ?? null;
  const metrics = headlineMetrics(checkpoints.data?.data.find((c) => c.step === shownStep)?.metrics ?? {});
  const stepText =
    step !== null
      ? `Step ${step}`
      : trained
        ? trained.latest_step !== null
          ? `Latest · step ${trained.latest_step}`
          : 'Latest'
        : 'Base model';
  return (
    <div className="min-w-0" title={value} data-testid="pane-model">
      <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <span className="text-sm leading-5 font-semibold wrap-anywhere text-fg" data-testid="pane-model-name">
          {name}
        </span>
        <Badge tone={step !== null || trained ? 'accent' : 'neutral'} className="py-0 text-[11px]">
          <span data-testid="pane-model-step">{stepText}</span>
        </Badge>
      </p>
      {scope ? (
        <p className="font-mono text-[11.5px] leading-4 wrap-anywhere text-fg-subtle" data-testid="pane-model-scope">
          {scope}
        </p>
      ) : null}
      {metrics.length > 0 ? (
        <dl className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-[11.5px] leading-4" data-testid="pane-model-metrics">
          {metrics.map(([key, v]) => (
            <div key={key} className="flex gap-1">
              <dt className="font-mono text-fg-subtle">{key}</dt>
              <dd className="text-fg tabular-nums">{formatNumber(v)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
    </div>
  );
}

/**
 * The model (a searchable list: base models, then trained ones) and, for a trained model, which checkpoint
 * (latest or a step). A name not in either list, e.g. from a hand-edited link, stays selectable so that
 * the server can say what is wrong with it.
 */
export function ModelPicker({
  value,
  onChange,
  baseModels,
  trainedModels,
  label,
  idPrefix,
  disabled,
}: ModelPickerProps) {
  const { model, step } = splitModelName(value);
  const trained = trainedModels.get(model);
  const checkpoints = useQuery({ ...checkpointPickerQuery(trained?.id ?? ''), enabled: Boolean(trained) });
  const steps = checkpoints.data?.data.map((c) => c.step) ?? [];
  if (step !== null && !steps.includes(step)) steps.unshift(step);
  const latest = trained?.latest_step ?? null;
  const trainedNames = useMemo(() => [...trainedModels.keys()], [trainedModels]);

  return (
    <div className="flex min-w-0 flex-1 flex-wrap gap-2">
      <label htmlFor={`${idPrefix}-model`} className="sr-only">
        {label}
      </label>
      <ModelCombobox
        id={`${idPrefix}-model`}
        value={model}
        onChange={onChange}
        baseModels={baseModels}
        trainedModels={trainedNames}
        disabled={disabled}
      />
      {trained ? (
        <>
          <label htmlFor={`${idPrefix}-checkpoint`} className="sr-only">
            {`Checkpoint of ${label.toLowerCase()}`}
          </label>
          <Select
            id={`${idPrefix}-checkpoint`}
            value={step === null ? 'latest' : String(step)}
            disabled={disabled}
            onChange={(event) =>
              onChange(
                joinModelName({ model, step: event.target.value === 'latest' ? null : Number(event.target.value) }),
              )
            }
            className="min-w-0 flex-[1_1_6.5rem]"
            data-testid="checkpoint-select"
          >
            <option value="latest">{latest !== null ? `Latest (step ${latest})` : 'Latest'}</option>
            {steps.map((s) => (
              <option key={s} value={String(s)}>
                Step {s}
              </option>
            ))}
          </Select>
        </>
      ) : null}
    </div>
  );
}
