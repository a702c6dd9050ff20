'use client';

import { useMemo, useState } from 'react';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { useModalDialog } from '@/components/ui/use-modal-dialog';
import { createModelFormSchema } from '@/lib/client/forms/form-schemas';
import { useApiForm } from '@/lib/client/forms/use-api-form';
import { baseModelFacts, type BaseModel } from './base-model-label';
import type { CreateModelDialogProps } from './create-model-dialog';

/**
 * A form in a native <dialog> (focus trap, Escape, inert background for free). The entity is the one
 * selected in the sidebar, not a field: models are created where the user is looking.
 */
export default function CreateModelDialogForm({ open, onClose, ...props }: CreateModelDialogProps) {
  const ref = useModalDialog(open);
  // Each opening starts a fresh form (what was typed before a Cancel is gone); the dialog element itself stays, so
  // that closing it gives focus back to the button that opened it.
  const [opening, setOpening] = useState(0);
  const [wasOpen, setWasOpen] = useState(open);
  if (open !== wasOpen) {
    setWasOpen(open);
    if (open) setOpening((n) => n + 1);
  }
  const [pending, setPending] = useState(false);

  function close() {
    if (pending) return;
    onClose();
  }

  return (
    <dialog
      ref={ref}
      aria-labelledby="create-model-title"
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
      className="m-auto w-[calc(100%-2rem)] max-w-lg rounded-xl border border-line bg-surface-raised p-0 text-fg shadow-2xl backdrop:bg-black/50 backdrop:backdrop-blur-[1px]"
      data-testid="create-model-dialog"
    >
      <CreateModelForm key={opening} {...props} onPendingChange={setPending} onCancel={close} />
    </dialog>
  );
}

function CreateModelForm({
  entity,
  projects,
  baseModels,
  onSubmit,
  onPendingChange,
  onCancel,
}: Omit<CreateModelDialogProps, 'open' | 'onClose'> & {
  onPendingChange: (pending: boolean) => void;
  onCancel: () => void;
}) {
  const schema = useMemo(() => createModelFormSchema(projects), [projects]);
  const { submit, pending, formError, field, form } = useApiForm({
    schema,
    defaultValues: {
      project: '',
      name: '',
      base_model: (baseModels.find((m) => m.available) ?? baseModels[0])?.id ?? '',
    },
    onSubmit: async (body) => {
      onPendingChange(true);
      try {
        await onSubmit({ entity, ...body });
      } finally {
        onPendingChange(false);
      }
    },
  });

  return (
    <form onSubmit={submit} noValidate aria-labelledby="create-model-title">
      <div className="p-5">
        <h2 id="create-model-title" className="text-base font-semibold">
          New model in {entity}
        </h2>
        <p className="mt-1 text-sm text-fg-muted">
          A model is a named line of checkpoints trained from a base model. Training clients can create them too.
        </p>
        {formError ? (
          <Alert tone="danger" role="alert" className="mt-4">
            {formError}
          </Alert>
        ) : null}
        <fieldset disabled={pending} className="mt-4 grid gap-4">
          <TextField
            id="create-model-project"
            label="Project"
            list="create-model-projects"
            placeholder="e.g. support-bot"
            autoComplete="off"
            maxLength={128}
            hint="An existing project or a new one; it is created with the model."
            data-testid="create-model-project"
            {...field('project')}
          />
          <datalist id="create-model-projects">
            {projects.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
          <TextField
            id="create-model-name"
            label="Name"
            placeholder="e.g. faq-assistant"
            autoComplete="off"
            maxLength={128}
            hint={
              <>
                Clients call it as <span className="font-mono">{entity}/project/name</span>, so no “/” or “:”.
              </>
            }
            data-testid="create-model-name"
            {...field('name')}
          />
          <SelectField
            id="create-model-base"
            label="Base model"
            hint="Size, context length, who trains it and who serves it. A model whose engine is down is greyed out, with the reason."
            data-testid="create-model-base-model"
            {...field('base_model')}
          >
            {baseModels.length === 0 ? <option value="">No base models available</option> : null}
            {baseModels.map((m) => (
              <option
                key={m.id}
                value={m.id}
                disabled={!m.available}
                title={m.description ?? undefined}
                data-testid="create-model-base-option"
              >
                {m.id} — {baseModelFacts(m)}
                {m.available ? '' : ` — unavailable: ${m.unavailable_reason}`}
              </option>
            ))}
          </SelectField>
          {/* A closed select shows one line, and the id with its facts is longer than the dialog is wide (cut off at
              390 px and in a narrow dialog): the chosen model's facts are repeated here, wrapping. */}
          <SelectedBaseFacts model={baseModels.find((m) => m.id === form.watch('base_model')) ?? null} />
        </fieldset>
      </div>
      <div className="flex justify-end gap-2 border-t border-line bg-surface-muted/60 px-5 py-3">
        <Button variant="secondary" onClick={onCancel} disabled={pending}>
          Cancel
        </Button>
        <Button type="submit" pending={pending} data-testid="create-model-submit">
          Create model
        </Button>
      </div>
    </form>
  );
}

function SelectedBaseFacts({ model }: { model: BaseModel | null }) {
  if (!model) return null;
  return (
    <p className="-mt-2 text-xs break-words text-fg-muted" data-testid="create-model-base-facts">
      <span className="font-mono break-all text-fg">{model.id}</span>: {baseModelFacts(model)}
      {model.available ? '' : ` (unavailable: ${model.unavailable_reason})`}
    </p>
  );
}
