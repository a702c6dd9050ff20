import type { ControllerRenderProps } from 'react-hook-form';
import { SelectField } from '@/components/ui/field';
import type { SftSettingsFormValues } from '@/lib/client/forms/form-schemas';
import type { StartFrom } from '@/lib/client/sft/state';
import type { ModelSummaryDto } from '@/lib/schemas/models';

/**
 * Where the SFT job starts: the model's latest checkpoint, its untrained base, or one of its checkpoints. Controlled:
 * the steps arrive with the checkpoints' query, and a step the model lacks shows as the latest (resolveStartFrom).
 */
export function StartFromSelect({
  field,
  startFrom,
  model,
  checkpointSteps,
  error,
  disabled,
}: {
  field: ControllerRenderProps<SftSettingsFormValues, 'start_from'>;
  startFrom: StartFrom;
  model: ModelSummaryDto | undefined;
  checkpointSteps: readonly number[];
  error: string | undefined;
  disabled: boolean;
}) {
  return (
    <SelectField
      id="sft-start-from"
      label="Start from"
      {...field}
      value={startFrom === 'latest' ? 'latest' : String(startFrom)}
      error={error}
      hint={
        startFrom === 'base'
          ? `The untrained ${model?.base_model ?? 'base model'}: earlier jobs' training is left out`
          : startFrom === 'latest'
            ? 'Continues the model’s training'
            : `Goes on from step ${startFrom}; the result still becomes the next step`
      }
      disabled={disabled}
    >
      <option value="latest">
        Latest checkpoint{model?.latest_step != null ? ` (step ${model.latest_step})` : ''}
      </option>
      <option value="base">Base model</option>
      {checkpointSteps.length > 0 ? (
        <optgroup label="A checkpoint">
          {/* The latest step too: pinned, it stays the start even if another job finishes first. */}
          {checkpointSteps.map((step) => (
            <option key={step} value={String(step)}>
              Step {step}
            </option>
          ))}
        </optgroup>
      ) : null}
    </SelectField>
  );
}
