'use client';

import { useQuery } from '@tanstack/react-query';
import { Badge } from '@/components/ui/badge';
import { useMemo } from 'react';
import { Combobox, type ComboboxGroup, type ComboboxOption } from '@/components/ui/combobox';
import { headlineMetrics, joinModelName, modelLabel, splitModelName } from '@/lib/client/chat/model-choice';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import { formatNumber } from '@/lib/client/format/trajectory-view';
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
 * with entity/project below it; the full name is the title. Sits above the two pickers, whose closed inputs
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
  // The same query as the checkpoint picker below: no request of its own.
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

/** A model as an option: its own name over where it lives (entity/project, or a base model's organisation). */
function modelOption(model: string): ComboboxOption {
  const { name, scope } = modelLabel(model);
  return { value: model, label: name || model, detail: scope || undefined };
}

/**
 * The model (a searchable list: base models, then trained ones) and, for a trained model, which checkpoint
 * (latest or a step, searchable too, each with its headline metric). A name not in either list, e.g. from a
 * hand-edited link, stays selectable so that the server can say what is wrong with it.
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
  const latest = trained?.latest_step ?? null;

  const modelGroups = useMemo<ComboboxGroup[]>(() => {
    const trainedNames = [...trainedModels.keys()];
    const known = baseModels.includes(model) || trainedModels.has(model);
    return [
      ...(known ? [] : [{ label: 'Current', options: [modelOption(model)] }]),
      { label: 'Base models', options: baseModels.map(modelOption) },
      ...(trainedNames.length > 0 ? [{ label: 'Your models', options: trainedNames.map(modelOption) }] : []),
    ];
  }, [baseModels, trainedModels, model]);

  const checkpointGroups = useMemo<ComboboxGroup[]>(() => {
    const list = checkpoints.data?.data ?? [];
    const headline = (s: number | null) => {
      const first = headlineMetrics(list.find((c) => c.step === s)?.metrics ?? {})[0];
      return first ? `${first[0]} ${formatNumber(first[1])}` : undefined;
    };
    const steps = list.map((c) => c.step);
    // A step from the link that the list does not hold (deleted, or past the newest 100) stays choosable.
    if (step !== null && !steps.includes(step)) steps.unshift(step);
    // "Latest" alone as its label: the closed input is narrow beside the model's, and the step is in the heading.
    const latestDetail = [latest !== null ? `step ${latest}` : null, headline(latest)].filter(Boolean).join(' · ');
    return [
      {
        options: [
          { value: 'latest', label: 'Latest', detail: latestDetail || undefined },
          ...steps.map((s) => ({ value: String(s), label: `Step ${s}`, detail: headline(s) })),
        ],
      },
    ];
  }, [checkpoints.data, step, latest]);

  return (
    <div className="flex min-w-0 flex-1 flex-wrap gap-2">
      <label htmlFor={`${idPrefix}-model`} className="sr-only">
        {label}
      </label>
      <Combobox
        id={`${idPrefix}-model`}
        value={model}
        onChange={onChange}
        groups={modelGroups}
        title={model}
        placeholder="Search models…"
        showAllLabel="Show all models"
        emptyText="No model matches"
        className="flex-[3_1_10rem]"
        disabled={disabled}
        data-testid="model-select"
        optionTestId="model-option"
        popupTestId="model-options"
      />
      {trained ? (
        <>
          <label htmlFor={`${idPrefix}-checkpoint`} className="sr-only">
            {`Checkpoint of ${label.toLowerCase()}`}
          </label>
          <Combobox
            id={`${idPrefix}-checkpoint`}
            value={step === null ? 'latest' : String(step)}
            onChange={(next) => onChange(joinModelName({ model, step: next === 'latest' ? null : Number(next) }))}
            groups={checkpointGroups}
            placeholder="Search steps…"
            showAllLabel="Show all checkpoints"
            emptyText="No checkpoint matches"
            className="flex-[1_1_6.5rem]"
            disabled={disabled}
            data-testid="checkpoint-select"
            optionTestId="checkpoint-option"
            popupTestId="checkpoint-options"
          />
        </>
      ) : null}
    </div>
  );
}
