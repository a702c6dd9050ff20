'use client';

import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Button } from '@/components/ui/button';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { evalSetsQuery, useSetAutoEval } from '@/lib/client/queries/evals';
import {
  buildEvalSettings,
  newScorerDraft,
  placeRunErrors,
  scorerDraftFrom,
  type AutoEval,
  type ScorerDraft,
} from '@/lib/client/evals/evals';
import { useChatModelChoices } from '@/lib/client/hooks/use-chat-model-choices';
import { EvalSetField, SamplingFields, type SettingsDraft } from './eval-settings-fields';
import { ScorersEditor } from './scorers-editor';

/** The model's auto-eval setting as a form: PUT /v1/preview/models/{id}/auto-eval. Loaded when "Set up" is pressed. */
export default function AutoEvalForm({
  modelId,
  current,
  onDone,
}: {
  modelId: string;
  current: AutoEval;
  onDone: () => void;
}) {
  const sets = useQuery(evalSetsQuery());
  const { baseModels, trainedModels } = useChatModelChoices();
  const [settings, setSettings] = useState<SettingsDraft>(() => ({
    evalSetId: current?.eval_set_id ?? '',
    temperature: String(current?.sampling?.temperature ?? 0),
    maxTokens: String(current?.sampling?.max_tokens ?? 256),
    n: String(current?.n ?? 1),
  }));
  const [scorers, setScorers] = useState<ScorerDraft[]>(() => {
    const drafts = (current?.scorers ?? []).flatMap((s) => scorerDraftFrom(s) ?? []);
    return drafts.length ? drafts : [newScorerDraft('exact_match')];
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const save = useSetAutoEval(modelId);

  function submit(event: FormEvent) {
    event.preventDefault();
    const { body, errors: found } = buildEvalSettings({ ...settings, scorers });
    setErrors(found);
    setFormError(null);
    if (!body) return;
    save.mutate(body, {
      onSuccess: onDone,
      onError: (error) => {
        if (isApiClientError(error) && Object.keys(error.fieldErrors).length) {
          const placed = placeRunErrors(error.fieldErrors);
          setErrors(placed.fields);
          setFormError(placed.form.join('; ') || null);
        } else setFormError(error.message);
      },
    });
  }

  return (
    <form onSubmit={submit} noValidate aria-label="Auto-eval setting" className="flex flex-col gap-5">
      <EvalSetField
        id="auto-eval-set"
        sets={sets.data?.data ?? []}
        value={settings.evalSetId}
        onChange={(evalSetId) => setSettings((s) => ({ ...s, evalSetId }))}
        error={errors.eval_set_id}
      />
      <ScorersEditor
        idPrefix="auto-eval"
        scorers={scorers}
        onChange={setScorers}
        errors={errors}
        judgeModels={[...baseModels, ...trainedModels.keys()]}
      />
      <SamplingFields
        idPrefix="auto-eval"
        draft={settings}
        onChange={(patch) => setSettings((s) => ({ ...s, ...patch }))}
        errors={errors}
      />
      <div className="flex flex-wrap items-center justify-end gap-2">
        {formError || Object.keys(errors).length ? (
          <p role="alert" className="mr-auto text-sm font-medium text-danger-text">
            {formError ?? 'Fix the marked fields.'}
          </p>
        ) : null}
        <Button variant="ghost" onClick={onDone}>
          Cancel
        </Button>
        <Button type="submit" pending={save.isPending} data-testid="auto-eval-save">
          Evaluate every new checkpoint
        </Button>
      </div>
    </form>
  );
}
