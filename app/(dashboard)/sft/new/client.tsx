'use client';

import { useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMemo, useReducer, useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { useController, useWatch } from 'react-hook-form';
import type { SftEval } from '@/components/evals/sft-eval-field';
import { DatasetField } from '@/components/sft/dataset-field';
import { LaunchError } from '@/components/sft/launch-error';
import { ModelSelect } from '@/components/sft/model-select';
import { SettingsFields } from '@/components/sft/settings-fields';
import { SftEstimateLine } from '@/components/sft/sft-estimate-line';
import { NoModelsYet, SftFormLoading } from '@/components/sft/sft-placeholders';
import { StartFromSelect } from '@/components/sft/start-from-select';
import { Alert } from '@/components/ui/alert';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/card';
import { SelectField } from '@/components/ui/field';
import { PageHeader } from '@/components/ui/page-header';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { sftSettingsFormSchema } from '@/lib/client/forms/form-schemas';
import { useLaunchSftJob } from '@/lib/client/queries/mutations';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import { modelPickerQuery } from '@/lib/client/queries/models';
import { datasetNameFromFile, inspectSftText } from '@/lib/client/sft/sft-dataset';
import { sftTimingQuery } from '@/lib/client/sft/sft-estimate';
import {
  blocksSubmit,
  effectiveModelId,
  estimateInputs,
  fileProblemOf,
  initialSftFileState,
  linkedModelMissing,
  resolveStartFrom,
  sftFileReducer,
} from '@/lib/client/sft/state';
import { useApiForm } from '@/lib/client/forms/use-api-form';
import { SFT_FORM_DEFAULTS } from '@/lib/schemas/training-jobs';

interface SftLaunchClientProps {
  entity: string;
  defaultEntity: string;
  initialModelId: string | null;
  /** `?from=<step>`: preselects that checkpoint as the starting point (when the model has it). */
  initialStartStep: number | null;
  origin: string;
}

/** Shares of the dataset the form offers to hold out; the API takes any share up to MAX_VALIDATION_SPLIT. */
const HOLD_OUT_CHOICES = [0, 0.1, 0.2, 0.3] as const;

// "Evaluate each checkpoint on an eval set" (the job's `eval`): after hydration, so the eval schemas and queries stay
// out of the form's first load (bench:ui, ≤ 250 kB).
const SftEvalField = dynamic(() => import('@/components/evals/sft-eval-field'), { ssr: false });

/**
 * The SFT launch form. Its own state (the file and its check) is lib/client/sft/state.ts's reducer, the settings are
 * react-hook-form's; what the form derives from both (the model, the start, the estimate, what blocks a submit) is
 * computed there too, unit-tested. The pieces it renders are components/sft.
 */
export function SftLaunchClient({
  entity,
  defaultEntity,
  initialModelId,
  initialStartStep,
  origin,
}: SftLaunchClientProps) {
  const router = useRouter();
  const models = useQuery(modelPickerQuery(null));
  const list = useMemo(() => models.data?.data ?? [], [models.data]);

  const [fileState, dispatch] = useReducer(sftFileReducer, initialSftFileState);
  const { chosen } = fileState;
  const formRef = useRef<HTMLFormElement>(null);
  const launch = useLaunchSftJob();
  const [evaluate, setEvaluate] = useState<SftEval>(null);

  const { form, submit, pending, formError, field } = useApiForm({
    schema: sftSettingsFormSchema,
    defaultValues: {
      model_id: '',
      dataset_name: '',
      batch_size: String(SFT_FORM_DEFAULTS.batchSize),
      learning_rate: String(SFT_FORM_DEFAULTS.learningRate),
      epochs: String(SFT_FORM_DEFAULTS.epochs),
      start_from: initialStartStep === null ? 'latest' : String(initialStartStep),
      validation_split: '0',
    },
    // A setting is explained as it is typed: the estimate below follows the same values.
    mode: 'onChange',
    onSubmit: async (settings) => {
      if (!model || !chosen) return;
      const job = await launch.mutateAsync({
        model,
        file: chosen.file,
        datasetName: settings.dataset_name,
        evaluate,
        config: {
          batch_size: settings.batch_size,
          learning_rate: settings.learning_rate,
          epochs: settings.epochs,
          ...(settings.validation_split ? { validation_split: settings.validation_split } : {}),
          ...(startFrom !== 'latest' ? { start_from: startFrom } : {}),
        },
      });
      router.push(hrefWithEntity(`/jobs/${job.id}`, entity, defaultEntity));
    },
    // The upload's query and the job's config, as the server names them.
    serverFields: {
      name: 'dataset_name',
      'config.batch_size': 'batch_size',
      'config.learning_rate': 'learning_rate',
      'config.epochs': 'epochs',
      'config.validation_split': 'validation_split',
      'config.start_from': 'start_from',
    },
    // The alert above says which call failed; "training_data_url: …" would only add the server's word for it.
    namedFields: false,
  });
  const values = useWatch({ control: form.control });
  // The selects whose options arrive with their queries are controlled: what they show is resolved below.
  const modelField = useController({ control: form.control, name: 'model_id' });
  const startFromField = useController({ control: form.control, name: 'start_from' });

  const modelId = effectiveModelId(values.model_id, initialModelId, entity, list);
  const model = list.find((m) => m.id === modelId);
  const checkpoints = useQuery({ ...checkpointPickerQuery(modelId), enabled: Boolean(model) });
  const timing = useQuery({ ...sftTimingQuery(model?.base_model ?? ''), enabled: Boolean(model) });
  const checkpointSteps = checkpoints.data?.data.map((c) => c.step) ?? [];
  const startFrom = resolveStartFrom(values.start_from, checkpointSteps);

  async function onFile(file: File) {
    dispatch({ type: 'readStarted' });
    launch.reset();
    try {
      const text = await file.text();
      dispatch({ type: 'read', file, inspection: inspectSftText('train.jsonl', text) });
      form.setValue('dataset_name', datasetNameFromFile(file.name), { shouldValidate: true });
    } catch {
      dispatch({ type: 'readFailed' });
    }
  }

  const fileProblem = fileProblemOf(chosen);
  const { holdOut, holdOutProblem, plan } = estimateInputs(values, chosen?.inspection);
  const blocked = blocksSubmit(fileState, Boolean(model), holdOutProblem);
  const canSubmit = !blocked && sftSettingsFormSchema.safeParse(values).success;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    // What the settings' schema cannot see (the file, the hold-out against its size) is checked first.
    if (blocked) {
      event.preventDefault();
      flushSync(() => dispatch({ type: 'submitRefused' }));
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    void submit(event);
  }

  if (models.isPending) return <SftFormLoading />;
  const modelsHref = hrefWithEntity('/models', entity, defaultEntity);
  if (models.isSuccess && list.length === 0) return <NoModelsYet modelsHref={modelsHref} origin={origin} />;

  return (
    <>
      <PageHeader
        title="Fine-tune a model"
        description="Upload a chat dataset and start a supervised fine-tuning job. Every line is checked in your browser before anything is sent."
      />
      {models.isError ? (
        <Alert tone="danger" role="alert" title="Could not load your models" className="mb-4">
          {models.error.message}
        </Alert>
      ) : null}
      <form ref={formRef} onSubmit={onSubmit} noValidate aria-labelledby="sft-form-title">
        <Card>
          <CardHeader
            id="sft-form-title"
            title="New SFT job"
            description="The dataset is stored as a new version in the model’s project."
          />
          <CardBody className="flex flex-col gap-6">
            {linkedModelMissing(initialModelId, models.isSuccess, list) ? (
              <Alert tone="warning" role="status">
                The linked model was not found among your models; pick one below.
              </Alert>
            ) : null}
            <ModelSelect
              field={modelField.field}
              value={modelId}
              model={model}
              models={list}
              error={modelField.fieldState.error?.message}
              disabled={pending}
            />
            <DatasetField state={fileState} onFile={onFile} disabled={pending} />
            <SettingsFields field={field} model={model} datasetName={values.dataset_name} disabled={pending} />
            <div className="grid gap-5 sm:grid-cols-2">
              <StartFromSelect
                field={startFromField.field}
                startFrom={startFrom}
                model={model}
                checkpointSteps={checkpointSteps}
                error={startFromField.fieldState.error?.message}
                disabled={pending}
              />
              <SelectField
                id="sft-hold-out"
                label="Hold out for validation"
                {...field('validation_split')}
                error={field('validation_split').error ?? holdOutProblem}
                hint={
                  holdOut > 0
                    ? 'Never trained on; scored after every epoch (val loss, token accuracy), so the best checkpoint is chosen on them'
                    : 'Train on every example'
                }
                disabled={pending}
              >
                {HOLD_OUT_CHOICES.map((share) => (
                  <option key={share} value={String(share)}>
                    {share === 0 ? 'None' : `${Math.round(share * 100)} % of the examples`}
                  </option>
                ))}
              </SelectField>
              <SftEvalField onChange={setEvaluate} disabled={pending} />
            </div>
            {plan !== null ? <SftEstimateLine plan={plan} timing={timing.data} /> : null}
            {launch.isError ? <LaunchError step={launch.step} message={formError} /> : null}
          </CardBody>
          <CardFooter>
            <p className="mr-auto text-sm text-fg-muted" role="status" aria-live="polite">
              {pending
                ? launch.step === 'upload'
                  ? 'Uploading the dataset…'
                  : 'Starting the job…'
                : // A disabled button cannot say why; this line does.
                  (fileProblem ?? '')}
            </p>
            <Link href={modelsHref} className={buttonClassName({ variant: 'secondary' })}>
              Cancel
            </Link>
            <Button type="submit" pending={pending} disabled={!canSubmit} data-testid="sft-submit">
              Upload and start training
            </Button>
          </CardFooter>
        </Card>
      </form>
    </>
  );
}
