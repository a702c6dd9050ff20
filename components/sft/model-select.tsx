import type { ControllerRenderProps } from 'react-hook-form';
import { SelectField } from '@/components/ui/field';
import type { SftSettingsFormValues } from '@/lib/client/forms/form-schemas';
import type { ModelSummaryDto } from '@/lib/schemas/models';

function groupByEntity(models: readonly ModelSummaryDto[]): [string, ModelSummaryDto[]][] {
  const groups = new Map<string, ModelSummaryDto[]>();
  for (const model of models) groups.set(model.entity, [...(groups.get(model.entity) ?? []), model]);
  return [...groups.entries()];
}

/**
 * The SFT form's model, grouped by entity. Controlled: its options arrive with the models' query, so what it shows
 * is the form's resolved choice (`value`, lib/client/sft/state.ts's effectiveModelId), not the field's raw value.
 */
export function ModelSelect({
  field,
  value,
  model,
  models,
  error,
  disabled,
}: {
  field: ControllerRenderProps<SftSettingsFormValues, 'model_id'>;
  value: string;
  model: ModelSummaryDto | undefined;
  models: readonly ModelSummaryDto[];
  error: string | undefined;
  disabled: boolean;
}) {
  return (
    <SelectField
      id="sft-model"
      label="Model"
      hint={
        model
          ? `Base model ${model.base_model} · ${model.latest_step === null ? 'no checkpoints yet' : `latest step ${model.latest_step}`}`
          : undefined
      }
      {...field}
      value={value}
      error={error}
      disabled={disabled}
    >
      {groupByEntity(models).map(([group, items]) => (
        <optgroup key={group} label={group}>
          {items.map((m) => (
            <option key={m.id} value={m.id}>
              {m.project}/{m.name}
            </option>
          ))}
        </optgroup>
      ))}
    </SelectField>
  );
}
