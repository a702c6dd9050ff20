'use client';

import { useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useMemo, useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { useController, useWatch } from 'react-hook-form';
import type { z } from 'zod';
import { DatasetDropZone } from '@/components/sft/dataset-drop-zone';
import { DatasetErrors, DatasetPreview } from '@/components/sft/dataset-preview';
import { Alert } from '@/components/ui/alert';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { EmptyState } from '@/components/ui/empty-state';
import { SelectField, TextField } from '@/components/ui/field';
import { BoxIcon, CheckIcon } from '@/components/ui/icons';
import { PageHeader } from '@/components/ui/page-header';
import { Skeleton } from '@/components/ui/skeleton';
import { hrefWithEntity } from '@/lib/client/entity';
import { useLaunchSftJob } from '@/lib/client/mutations';
import { checkpointPickerQuery } from '@/lib/client/queries/checkpoints';
import { modelPickerQuery } from '@/lib/client/queries/models';
import { formatDuration } from '@/lib/client/format-time';
import { sftEstimate, sftTimingQuery } from '@/lib/client/sft-estimate';
import { sftSettingsFormSchema } from '@/lib/client/form-schemas';
import { datasetNameFromFile, inspectSftText, type SftInspection } from '@/lib/client/sft-dataset';
import { useApiForm } from '@/lib/client/use-api-form';
import { SFT_DEFAULT_BATCH_SIZE, SFT_FORM_DEFAULTS, sftStepCount, validationCount } from '@/lib/schemas/training-jobs';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import type { SftEval } from '@/components/evals/sft-eval-field';

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

interface ChosenFile {
  file: File;
  inspection: SftInspection;
}

function groupByEntity(models: ModelSummaryDto[]): [string, ModelSummaryDto[]][] {
  const groups = new Map<string, ModelSummaryDto[]>();
  for (const model of models) groups.set(model.entity, [...(groups.get(model.entity) ?? []), model]);
  return [...groups.entries()];
}

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

  const [chosen, setChosen] = useState<ChosenFile | null>(null);
  const [reading, setReading] = useState(false);
  const [readError, setReadError] = useState<string | null>(null);
  const [showFileProblem, setShowFileProblem] = useState(false);
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

  // The preselection: the linked model, else the first one of the selected entity, else the first one.
  const effectiveModelId =
    values.model_id ||
    (initialModelId && list.some((m) => m.id === initialModelId) ? initialModelId : '') ||
    list.find((m) => m.entity === entity)?.id ||
    list[0]?.id ||
    '';
  const model = list.find((m) => m.id === effectiveModelId);
  const missingLinkedModel = Boolean(initialModelId && models.isSuccess && !list.some((m) => m.id === initialModelId));
  const checkpoints = useQuery({ ...checkpointPickerQuery(effectiveModelId), enabled: Boolean(model) });
  const timing = useQuery({ ...sftTimingQuery(model?.base_model ?? ''), enabled: Boolean(model) });
  const checkpointSteps = checkpoints.data?.data.map((c) => c.step) ?? [];
  // A step the chosen model does not have (another model picked, a stale link) falls back to the latest.
  const startFromChoice = values.start_from ?? 'latest';
  const startFrom: 'latest' | 'base' | number =
    startFromChoice === 'base'
      ? 'base'
      : startFromChoice !== 'latest' && checkpointSteps.includes(Number(startFromChoice))
        ? Number(startFromChoice)
        : 'latest';

  async function onFile(file: File) {
    setReading(true);
    setReadError(null);
    launch.reset();
    try {
      const text = await file.text();
      setChosen({ file, inspection: inspectSftText('train.jsonl', text) });
      form.setValue('dataset_name', datasetNameFromFile(file.name), { shouldValidate: true });
    } catch {
      setChosen(null);
      setReadError('The file could not be read. Choose it again.');
    } finally {
      setReading(false);
    }
  }

  const inspection = chosen?.inspection;
  const fileProblem = !chosen
    ? 'Choose a dataset file'
    : inspection && inspection.errorCount > 0
      ? 'Fix the invalid lines listed above'
      : inspection && inspection.exampleCount === 0
        ? 'The file has no examples'
        : undefined;
  // The settings as the form reads them (each its own parse, so that one bad field leaves the others' estimate).
  const setting = <K extends keyof typeof sftSettingsFormSchema.shape>(key: K) => {
    const parsed = sftSettingsFormSchema.shape[key].safeParse(values[key] ?? '');
    return parsed.success ? (parsed.data as z.output<(typeof sftSettingsFormSchema.shape)[K]>) : null;
  };
  const batch = setting('batch_size');
  const epochs = setting('epochs');
  const holdOut = setting('validation_split') ?? 0;
  // The estimate: steps exactly as the trainer batches; seconds only for built-in models, whose speed is known.
  const allExamples = inspection && inspection.errorCount === 0 ? inspection.exampleCount : 0;
  const heldOut = validationCount(allExamples, holdOut);
  const examples = allExamples - heldOut;
  const batchValue = batch === null || batch === undefined ? null : batch === 'auto' ? SFT_DEFAULT_BATCH_SIZE : batch;
  const steps =
    examples > 0 && batchValue !== null && epochs != null ? sftStepCount(examples, batchValue, epochs) : null;
  const holdOutProblem =
    holdOut > 0 && inspection && inspection.errorCount === 0 && allExamples < 2
      ? 'Holding examples out needs at least 2 examples'
      : undefined;
  const settingsValid = sftSettingsFormSchema.safeParse(values).success;
  const canSubmit = Boolean(model) && !fileProblem && settingsValid && !holdOutProblem && !reading;
  // Measured on this server: the base model's past SFT jobs on the worker that trained the latest (issue 41).
  const estimate = steps !== null ? sftEstimate(timing.data, steps) : null;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    // What the settings' schema cannot see (the file, the hold-out against its size) is checked first.
    if (!model || fileProblem || holdOutProblem || reading) {
      event.preventDefault();
      flushSync(() => setShowFileProblem(true));
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    void submit(event);
  }

  if (models.isPending) {
    return (
      <>
        <PageHeader title="Fine-tune a model" description="Supervised fine-tuning on a chat dataset." />
        <Card>
          <div className="flex flex-col gap-4 p-5" aria-busy="true" aria-label="Loading models">
            <Skeleton className="h-9 w-full" />
            <Skeleton className="h-32 w-full" />
          </div>
        </Card>
      </>
    );
  }

  if (models.isSuccess && list.length === 0) {
    return (
      <>
        <PageHeader title="Fine-tune a model" description="Supervised fine-tuning on a chat dataset." />
        <Card>
          <EmptyState
            icon={<BoxIcon className="size-5" />}
            title="Create a model first"
            description="A fine-tuning job trains a model record: a name and a base model. Create one on the Models page (or with the API), then come back."
          >
            <div className="mx-auto max-w-2xl text-left">
              <div className="mb-6 flex justify-center">
                <Link
                  href={hrefWithEntity('/models', entity, defaultEntity)}
                  className={buttonClassName()}
                  data-testid="sft-create-model"
                >
                  Go to Models
                </Link>
              </div>
              <CodeBlock
                label="Or from a terminal"
                code={`curl ${origin}/v1/preview/models \\\n  -H "Authorization: Bearer $TUNEBOARD_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d '{"project": "my-project", "name": "my-model", "base_model": "tuneboard/tiny-chat"}'`}
              />
            </div>
          </EmptyState>
        </Card>
      </>
    );
  }

  const errorsId = 'dataset-errors';

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
            {missingLinkedModel ? (
              <Alert tone="warning" role="status">
                The linked model was not found among your models; pick one below.
              </Alert>
            ) : null}
            <SelectField
              id="sft-model"
              label="Model"
              hint={
                model
                  ? `Base model ${model.base_model} · ${model.latest_step === null ? 'no checkpoints yet' : `latest step ${model.latest_step}`}`
                  : undefined
              }
              {...modelField.field}
              value={effectiveModelId}
              error={modelField.fieldState.error?.message}
              disabled={pending}
            >
              {groupByEntity(list).map(([group, items]) => (
                <optgroup key={group} label={group}>
                  {items.map((m) => (
                    <option key={m.id} value={m.id}>
                      {m.project}/{m.name}
                    </option>
                  ))}
                </optgroup>
              ))}
            </SelectField>

            <fieldset className="flex flex-col gap-3">
              <legend className="mb-1.5 text-sm font-medium text-fg">Dataset</legend>
              <DatasetDropZone
                fileName={chosen?.file.name ?? null}
                onFile={onFile}
                disabled={pending}
                invalid={Boolean(showFileProblem && fileProblem) || Boolean(inspection && inspection.errorCount > 0)}
                describedBy={[
                  'dataset-hint',
                  inspection && inspection.errorCount > 0 ? errorsId : null,
                  showFileProblem && fileProblem ? 'dataset-problem' : null,
                ]
                  .filter(Boolean)
                  .join(' ')}
              />
              <p id="dataset-hint" className="text-xs leading-relaxed text-fg-subtle">
                JSONL: one <code className="font-mono">{'{"messages": [...]}'}</code> object per line; roles system,
                developer, user, assistant or tool; the last message of each line is the assistant’s.
              </p>
              {showFileProblem && fileProblem && !(inspection && inspection.errorCount > 0) ? (
                <p id="dataset-problem" className="text-xs font-medium text-danger-text">
                  {fileProblem}
                </p>
              ) : null}
              {reading ? (
                <p role="status" className="text-sm text-fg-muted">
                  Checking the file…
                </p>
              ) : null}
              {readError ? (
                <Alert tone="danger" role="alert">
                  {readError}
                </Alert>
              ) : null}
              {inspection && !reading ? (
                <>
                  <p
                    role="status"
                    data-testid="dataset-summary"
                    className="flex items-center gap-1.5 text-sm text-fg-muted"
                  >
                    {inspection.errorCount === 0 && inspection.exampleCount > 0 ? (
                      <CheckIcon className="size-4 text-success-text" />
                    ) : null}
                    {inspection.exampleCount.toLocaleString('en')} valid example
                    {inspection.exampleCount === 1 ? '' : 's'}
                    {inspection.errorCount > 0
                      ? `, ${inspection.errorCount.toLocaleString('en')} invalid line${inspection.errorCount === 1 ? '' : 's'}`
                      : ''}
                    {' · '}
                    {formatBytes(chosen?.file.size ?? 0)}
                  </p>
                  <DatasetErrors inspection={inspection} id={errorsId} />
                  <DatasetPreview inspection={inspection} />
                </>
              ) : null}
            </fieldset>

            <div className="grid gap-5 sm:grid-cols-2 lg:grid-cols-4">
              <TextField
                id="sft-dataset-name"
                label="Dataset name"
                {...field('dataset_name')}
                hint={
                  model ? `Saved as ${model.entity}/${model.project}/${values.dataset_name?.trim() || '…'}` : undefined
                }
                disabled={pending}
                autoComplete="off"
                spellCheck={false}
              />
              <TextField
                id="sft-batch-size"
                label="Batch size"
                {...field('batch_size')}
                hint="“auto” or a whole number"
                inputMode="text"
                disabled={pending}
                autoComplete="off"
              />
              <TextField
                id="sft-learning-rate"
                label="Learning rate"
                {...field('learning_rate')}
                placeholder={String(SFT_FORM_DEFAULTS.learningRate)}
                hint="One value, or a comma-separated schedule"
                disabled={pending}
                autoComplete="off"
              />
              <TextField
                id="sft-epochs"
                label="Epochs"
                {...field('epochs')}
                hint="Passes over the dataset"
                inputMode="numeric"
                disabled={pending}
                autoComplete="off"
              />
            </div>
            <div className="grid gap-5 sm:grid-cols-2">
              <SelectField
                id="sft-start-from"
                label="Start from"
                {...startFromField.field}
                value={startFrom === 'latest' ? 'latest' : String(startFrom)}
                error={startFromField.fieldState.error?.message}
                hint={
                  startFrom === 'base'
                    ? `The untrained ${model?.base_model ?? 'base model'}: earlier jobs' training is left out`
                    : startFrom === 'latest'
                      ? 'Continues the model’s training'
                      : `Goes on from step ${startFrom}; the result still becomes the next step`
                }
                disabled={pending}
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
            {steps !== null && batchValue !== null && epochs != null ? (
              <p className="text-sm text-fg-muted" data-testid="sft-estimate" aria-live="polite">
                {examples} example{examples === 1 ? '' : 's'}
                {heldOut > 0 ? ` (${heldOut} held out)` : ''} × {epochs} epoch{epochs === 1 ? '' : 's'} ÷ batch{' '}
                {batchValue} = {steps} step{steps === 1 ? '' : 's'}
                {estimate !== null
                  ? `, about ${formatDuration(estimate.seconds * 1000)} as ${estimate.jobs} earlier job${estimate.jobs === 1 ? '' : 's'} on this base model ran${estimate.workerId ? ` on ${estimate.workerId}` : ''}`
                  : ' (no job on this base model has been timed yet: time depends on the worker that trains it)'}
                .
              </p>
            ) : null}

            {launch.isError ? (
              <Alert
                tone="danger"
                role="alert"
                title={launch.step === 'upload' ? 'The server rejected the dataset' : 'The job could not be started'}
              >
                <span data-testid="sft-server-error">{formError ?? 'See the fields marked above.'}</span>
                {launch.step === 'job' ? (
                  <span className="block">The dataset was uploaded; submitting again adds a new version.</span>
                ) : null}
              </Alert>
            ) : null}
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
            <Link
              href={hrefWithEntity('/models', entity, defaultEntity)}
              className={buttonClassName({ variant: 'secondary' })}
            >
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

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
