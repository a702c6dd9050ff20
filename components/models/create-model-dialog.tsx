'use client';

import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import type { z } from 'zod';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import type { baseModelSchema } from '@/lib/schemas/base-models';
import {
  createModelBodySchema,
  NEW_PROJECT_NAME,
  NEW_PROJECT_NAME_HINT,
  type CreateModelBody,
} from '@/lib/schemas/models';
import { useModalDialog } from '@/components/ui/use-modal-dialog';
import { baseModelFacts } from './base-model-label';

export type BaseModelDto = z.infer<typeof baseModelSchema>;

const FIELDS = ['project', 'name', 'base_model'] as const;

interface CreateModelDialogProps {
  open: boolean;
  entity: string;
  projects: string[];
  baseModels: BaseModelDto[];
  pending: boolean;
  error: unknown;
  onSubmit: (body: CreateModelBody) => void;
  onClose: () => void;
}

/**
 * A form in a native <dialog> (focus trap, Escape, inert background for free). The entity is the one
 * selected in the sidebar, not a field: models are created where the user is looking.
 */
export function CreateModelDialog({
  open,
  entity,
  projects,
  baseModels,
  pending,
  error,
  onSubmit,
  onClose,
}: CreateModelDialogProps) {
  const ref = useModalDialog(open);
  const formRef = useRef<HTMLFormElement>(null);
  const [localErrors, setLocalErrors] = useState<FieldErrors | null>(null);
  const server = error ? splitSubmitError(error, FIELDS) : { fieldErrors: {}, formError: null };
  const fieldErrors = localErrors ?? server.fieldErrors;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const body = {
      entity,
      project: String(data.get('project') ?? '').trim(),
      name: String(data.get('name') ?? '').trim(),
      base_model: String(data.get('base_model') ?? ''),
    };
    const parsed = createModelBodySchema.safeParse(body);
    const errors: FieldErrors = parsed.success ? {} : zodFieldErrors(parsed.error);
    if (!body.project) errors.project = 'Name the project the model belongs to';
    else if (!errors.project && !projects.includes(body.project) && !NEW_PROJECT_NAME.test(body.project))
      errors.project = `A new project name must be a slug: ${NEW_PROJECT_NAME_HINT}`;
    if (!body.name) errors.name = 'Give the model a name';
    if (!body.base_model) errors.base_model = 'Choose a base model';
    if (Object.keys(errors).length > 0 || !parsed.success) {
      flushSync(() => setLocalErrors(errors));
      focusFirstInvalid(formRef.current, errors, FIELDS);
      return;
    }
    setLocalErrors(null);
    onSubmit(parsed.data);
  }

  function close() {
    if (pending) return;
    setLocalErrors(null);
    formRef.current?.reset();
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
      <form ref={formRef} onSubmit={submit} noValidate aria-labelledby="create-model-title">
        <div className="p-5">
          <h2 id="create-model-title" className="text-base font-semibold">
            New model in {entity}
          </h2>
          <p className="mt-1 text-sm text-fg-muted">
            A model is a named line of checkpoints trained from a base model. Training clients can create them too.
          </p>
          {server.formError && !localErrors ? (
            <Alert tone="danger" role="alert" className="mt-4">
              {server.formError}
            </Alert>
          ) : null}
          <fieldset disabled={pending} className="mt-4 grid gap-4">
            <TextField
              id="create-model-project"
              name="project"
              label="Project"
              list="create-model-projects"
              placeholder="e.g. support-bot"
              autoComplete="off"
              maxLength={128}
              hint="An existing project or a new one; it is created with the model."
              error={fieldErrors.project}
              data-testid="create-model-project"
            />
            <datalist id="create-model-projects">
              {projects.map((p) => (
                <option key={p} value={p} />
              ))}
            </datalist>
            <TextField
              id="create-model-name"
              name="name"
              label="Name"
              placeholder="e.g. faq-assistant"
              autoComplete="off"
              maxLength={128}
              hint={
                <>
                  Clients call it as <span className="font-mono">{entity}/project/name</span>, so no “/” or “:”.
                </>
              }
              error={fieldErrors.name}
              data-testid="create-model-name"
            />
            <SelectField
              id="create-model-base"
              name="base_model"
              label="Base model"
              defaultValue={(baseModels.find((m) => m.available) ?? baseModels[0])?.id ?? ''}
              error={fieldErrors.base_model}
              hint="Size, context length, who trains it and who serves it. A model whose engine is down is greyed out, with the reason."
              data-testid="create-model-base-model"
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
          </fieldset>
        </div>
        <div className="flex justify-end gap-2 border-t border-line bg-surface-muted/60 px-5 py-3">
          <Button variant="secondary" onClick={close} disabled={pending}>
            Cancel
          </Button>
          <Button type="submit" pending={pending} data-testid="create-model-submit">
            Create model
          </Button>
        </div>
      </form>
    </dialog>
  );
}
