'use client';

import { useQuery } from '@tanstack/react-query';
import { Select } from '@/components/ui/input';
import { joinModelName, splitModelName } from '@/lib/client/model-choice';
import { checkpointPickerQuery } from '@/lib/client/query-keys';
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
 * Two selects: the model (base models, then trained ones) and, for a trained model, which checkpoint
 * (latest or a step). A name not in either list, e.g. from a hand-edited link, stays selectable so that
 * the server can say what is wrong with it.
 */
export function ModelPicker({ value, onChange, baseModels, trainedModels, label, idPrefix, disabled }: ModelPickerProps) {
  const { model, step } = splitModelName(value);
  const trained = trainedModels.get(model);
  const checkpoints = useQuery({ ...checkpointPickerQuery(trained?.id ?? ''), enabled: Boolean(trained) });
  const known = baseModels.includes(model) || trained !== undefined;
  const steps = checkpoints.data?.data.map((c) => c.step) ?? [];
  if (step !== null && !steps.includes(step)) steps.unshift(step);

  return (
    <div className="flex min-w-0 flex-1 flex-wrap gap-2">
      <label htmlFor={`${idPrefix}-model`} className="sr-only">
        {label}
      </label>
      <Select
        id={`${idPrefix}-model`}
        value={model}
        disabled={disabled}
        onChange={(event) => onChange(event.target.value)}
        className="min-w-0 flex-[2_1_12rem]"
        data-testid="model-select"
      >
        {!known ? <option value={model}>{model}</option> : null}
        <optgroup label="Base models">
          {baseModels.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </optgroup>
        {trainedModels.size > 0 ? (
          <optgroup label="Your models">
            {[...trainedModels.keys()].map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </optgroup>
        ) : null}
      </Select>
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
              onChange(joinModelName({ model, step: event.target.value === 'latest' ? null : Number(event.target.value) }))
            }
            className="min-w-0 flex-[1_1_7rem]"
            data-testid="checkpoint-select"
          >
            <option value="latest">Latest checkpoint</option>
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
