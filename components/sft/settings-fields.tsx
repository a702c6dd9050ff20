import type { UseFormRegisterReturn } from 'react-hook-form';
import { TextField } from '@/components/ui/field';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { SFT_FORM_DEFAULTS } from '@/lib/schemas/training-jobs';

type TextSetting = 'dataset_name' | 'batch_size' | 'learning_rate' | 'epochs';

/** The SFT form's typed settings: the dataset's name and the training's batch size, learning rate and epochs. */
export function SettingsFields({
  field,
  model,
  datasetName,
  disabled,
}: {
  /** useApiForm's `field`: the input's registration and its error. */
  field: (name: TextSetting) => UseFormRegisterReturn & { error?: string };
  model: ModelSummaryDto | undefined;
  datasetName: string | undefined;
  disabled: boolean;
}) {
  return (
    <div className="grid gap-5 sm:grid-cols-2 lg:grid-cols-4">
      <TextField
        id="sft-dataset-name"
        label="Dataset name"
        {...field('dataset_name')}
        hint={model ? `Saved as ${model.entity}/${model.project}/${datasetName?.trim() || '…'}` : undefined}
        disabled={disabled}
        autoComplete="off"
        spellCheck={false}
      />
      <TextField
        id="sft-batch-size"
        label="Batch size"
        {...field('batch_size')}
        hint="“auto” or a whole number"
        inputMode="text"
        disabled={disabled}
        autoComplete="off"
      />
      <TextField
        id="sft-learning-rate"
        label="Learning rate"
        {...field('learning_rate')}
        placeholder={String(SFT_FORM_DEFAULTS.learningRate)}
        hint="One value, or a comma-separated schedule"
        disabled={disabled}
        autoComplete="off"
      />
      <TextField
        id="sft-epochs"
        label="Epochs"
        {...field('epochs')}
        hint="Passes over the dataset"
        inputMode="numeric"
        disabled={disabled}
        autoComplete="off"
      />
    </div>
  );
}
