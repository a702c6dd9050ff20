'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ModelPicker } from '@/components/playground/model-picker';
import { Button } from '@/components/ui/button';
import { cx } from '@/components/ui/cx';
import { CloseIcon, PlusIcon } from '@/components/ui/icons';
import { MAX_TARGETS, targetLabel } from '@/lib/client/evals/evals';
import { joinModelName, splitModelName } from '@/lib/client/chat/model-choice';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import type { ModelSummaryDto } from '@/lib/schemas/models';

interface TargetPickerProps {
  targets: string[];
  onChange: (targets: string[]) => void;
  baseModels: string[];
  trainedModels: Map<string, ModelSummaryDto>;
  error?: string;
}

/**
 * 1–8 targets: the playground's model picker chooses a model (and a step) to add; for a trained model its
 * checkpoints are also offered as toggles, the quick way to pick several steps of one run.
 */
export function TargetPicker({ targets, onChange, baseModels, trainedModels, error }: TargetPickerProps) {
  const [picked, setChoice] = useState<string | null>(targets[0] ?? null);
  // Until a pick, the newest trained model (the lists load after the first render).
  const choice = picked ?? [...trainedModels.keys()][0] ?? baseModels[0] ?? '';
  const { model } = splitModelName(choice);
  const trained = trainedModels.get(model);
  const checkpoints = useQuery({ ...checkpointPickerQuery(trained?.id ?? ''), enabled: Boolean(trained) });
  const full = targets.length >= MAX_TARGETS;

  // "Latest" is pinned to its step: a run names the checkpoint it scored, and the chart needs the step.
  const pinned =
    trained && splitModelName(choice).step === null && trained.latest_step !== null
      ? joinModelName({ model, step: trained.latest_step })
      : choice;
  const toggle = (name: string) =>
    onChange(targets.includes(name) ? targets.filter((t) => t !== name) : full ? targets : [...targets, name]);

  return (
    <fieldset className="flex flex-col gap-3" data-testid="target-picker">
      <legend className="mb-1 text-sm font-medium text-fg">Checkpoints and models</legend>
      <p className="-mt-1 text-xs text-fg-subtle" id="targets-hint">
        1–{MAX_TARGETS} targets, of one model or several; each answers every example.
      </p>
      <div className="flex flex-wrap items-start gap-2">
        <ModelPicker
          value={choice}
          onChange={setChoice}
          baseModels={baseModels}
          trainedModels={trainedModels}
          label="Model to add"
          idPrefix="eval-target"
        />
        <Button
          variant="secondary"
          onClick={() => !targets.includes(pinned) && toggle(pinned)}
          disabled={!pinned || full || targets.includes(pinned)}
          data-testid="add-target"
        >
          <PlusIcon className="size-4" />
          Add
        </Button>
      </div>
      {trained && (checkpoints.data?.data.length ?? 0) > 0 ? (
        <div>
          <p className="mb-1.5 text-xs text-fg-muted">Checkpoints of {trained.name}:</p>
          <ul className="flex flex-wrap gap-1.5" aria-label={`Checkpoints of ${trained.name}`}>
            {[...(checkpoints.data?.data ?? [])]
              .sort((a, b) => a.step - b.step)
              .map((c) => {
                const name = joinModelName({ model, step: c.step });
                const on = targets.includes(name);
                return (
                  <li key={c.step}>
                    <label
                      className={cx(
                        'inline-flex cursor-pointer items-center gap-1.5 rounded-full border px-2.5 py-1 text-xs font-medium',
                        'has-[input:focus-visible]:outline-2 has-[input:focus-visible]:outline-ring',
                        on ? 'border-accent bg-accent-soft text-accent-text' : 'border-line-strong text-fg-muted',
                        !on && full && 'opacity-55',
                      )}
                    >
                      <input
                        type="checkbox"
                        className="size-3.5 accent-[var(--tb-accent)]"
                        checked={on}
                        disabled={!on && full}
                        onChange={() => toggle(name)}
                        data-testid="target-step"
                      />
                      step {c.step}
                    </label>
                  </li>
                );
              })}
          </ul>
        </div>
      ) : null}
      <div aria-live="polite">
        {targets.length === 0 ? (
          <p className="text-sm text-fg-subtle">No target yet.</p>
        ) : (
          <ul className="flex flex-wrap gap-1.5" aria-label="Chosen targets" data-testid="chosen-targets">
            {targets.map((t) => (
              <li
                key={t}
                className="inline-flex items-center gap-1 rounded-md border border-line bg-surface py-0.5 pr-1 pl-2 text-xs"
                title={t}
              >
                <span className="font-medium text-fg">{targetLabel(t)}</span>
                <button
                  type="button"
                  className="rounded p-0.5 text-fg-subtle hover:bg-surface-muted hover:text-fg"
                  aria-label={`Remove ${t}`}
                  onClick={() => toggle(t)}
                >
                  <CloseIcon className="size-3.5" />
                </button>
              </li>
            ))}
            <li className="self-center text-xs text-fg-subtle">
              {targets.length} / {MAX_TARGETS}
            </li>
          </ul>
        )}
      </div>
      {error ? (
        <p role="alert" className="text-xs font-medium text-danger-text" data-testid="targets-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
