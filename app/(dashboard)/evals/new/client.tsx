'use client';

import { useQuery } from '@tanstack/react-query';
import { Breadcrumb } from '@/components/ui/breadcrumb';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { EvalSetField, SamplingFields, type SettingsDraft } from '@/components/evals/eval-settings-fields';
import { ScorersEditor } from '@/components/evals/scorers-editor';
import { TargetPicker } from '@/components/evals/target-picker';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardFooter } from '@/components/ui/card';
import { TextField } from '@/components/ui/field';

import { isApiClientError } from '@/lib/client/api/api-fetch';
import { evalSetsQuery, useStartEvalRun } from '@/lib/client/queries/evals';
import { buildRunBody, newScorerDraft, placeRunErrors, type ScorerDraft } from '@/lib/client/evals/evals';
import { useChatModelChoices } from '@/lib/client/hooks/use-chat-model-choices';

export function NewEvalRunClient({ initialSetId, initialTargets }: { initialSetId: string; initialTargets: string[] }) {
  const router = useRouter();
  const sets = useQuery(evalSetsQuery());
  const { baseModels, trainedModels, error: listError } = useChatModelChoices();
  const [settings, setSettings] = useState<SettingsDraft>({
    evalSetId: initialSetId,
    temperature: '0',
    maxTokens: '256',
    n: '1',
  });
  const [targets, setTargets] = useState<string[]>(initialTargets);
  const [scorers, setScorers] = useState<ScorerDraft[]>([newScorerDraft('exact_match')]);
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formErrors, setFormErrors] = useState<string[]>([]);
  const start = useStartEvalRun();

  function submit(event: FormEvent) {
    event.preventDefault();
    const { body, errors: found } = buildRunBody({ ...settings, targets, scorers, name });
    setErrors(found);
    setFormErrors([]);
    if (!body) {
      focusFirstError();
      return;
    }
    start.mutate(body, {
      onSuccess: (run) => router.push(`/evals/runs/${encodeURIComponent(run.id)}`),
      onError: (error) => {
        if (isApiClientError(error) && Object.keys(error.fieldErrors).length > 0) {
          const placed = placeRunErrors(error.fieldErrors);
          setErrors(placed.fields);
          setFormErrors(placed.form);
          focusFirstError();
        } else setFormErrors([error.message]);
      },
    });
  }

  return (
    <>
      <Breadcrumb items={[{ label: 'Evals', href: '/evals' }, { label: 'New run' }]} />
      <h1 className="mb-1 text-2xl font-semibold tracking-tight text-fg">New eval run</h1>
      <p className="mb-6 text-sm text-fg-muted">
        Score checkpoints on a fixed set of examples. Each checkpoint&apos;s mean score is saved as{' '}
        <code className="font-mono text-[13px]">eval/&lt;set&gt;/&lt;scorer&gt;</code> beside its training metrics.
      </p>
      {listError ? (
        <Alert tone="danger" role="alert" title="Could not load the model list" className="mb-4">
          {listError.message}
        </Alert>
      ) : null}
      <form onSubmit={submit} noValidate aria-label="New eval run">
        <Card>
          <CardBody className="flex flex-col gap-6">
            <div className="grid gap-4 sm:grid-cols-2">
              <EvalSetField
                id="eval-set"
                sets={sets.data?.data ?? []}
                value={settings.evalSetId}
                onChange={(evalSetId) => setSettings((s) => ({ ...s, evalSetId }))}
                error={errors.eval_set_id ?? (sets.isError ? sets.error.message : undefined)}
              />
              <TextField
                id="eval-run-name"
                label="Name"
                optional
                value={name}
                onChange={(e) => setName(e.target.value)}
                error={errors.name}
                placeholder="step 3 vs step 7"
              />
            </div>
            <TargetPicker
              targets={targets}
              onChange={setTargets}
              baseModels={baseModels}
              trainedModels={trainedModels}
              error={errors.targets}
            />
            <ScorersEditor
              idPrefix="eval"
              scorers={scorers}
              onChange={setScorers}
              errors={errors}
              judgeModels={[...baseModels, ...trainedModels.keys()]}
            />
            <SamplingFields
              idPrefix="eval"
              draft={settings}
              onChange={(patch) => setSettings((s) => ({ ...s, ...patch }))}
              errors={errors}
            />
          </CardBody>
          <CardFooter className="justify-between">
            <div
              role="alert"
              className="min-w-0 flex-1 text-sm font-medium text-danger-text"
              data-testid="run-form-error"
            >
              {formErrors.length ? formErrors.join('; ') : Object.keys(errors).length ? 'Fix the marked fields.' : null}
            </div>
            <Button type="submit" pending={start.isPending} data-testid="start-eval-run">
              Start run
            </Button>
          </CardFooter>
        </Card>
      </form>
    </>
  );
}

/** After the errors render: the first invalid control takes focus, as the app's other forms do. */
function focusFirstError() {
  requestAnimationFrame(() =>
    document.querySelector<HTMLElement>('form[aria-label="New eval run"] [aria-invalid="true"]')?.focus(),
  );
}
