'use client';

import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { PlusIcon } from '@/components/ui/icons';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import { createTeamBodySchema } from '@/lib/schemas/accounts';

const FIELDS = ['name'] as const;

interface TeamCreateFormProps {
  pending: boolean;
  error: unknown;
  onSubmit: (input: { name: string }, done: () => void) => void;
}

export function TeamCreateForm({ pending, error, onSubmit }: TeamCreateFormProps) {
  const formRef = useRef<HTMLFormElement>(null);
  const [localErrors, setLocalErrors] = useState<FieldErrors | null>(null);
  const server = error ? splitSubmitError(error, FIELDS) : { fieldErrors: {}, formError: null };
  const fieldErrors = localErrors ?? server.fieldErrors;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get('name') ?? '').trim();
    const parsed = createTeamBodySchema.safeParse({ name });
    if (!parsed.success || !name) {
      const errors = name
        ? parsed.success
          ? {}
          : zodFieldErrors(parsed.error)
        : { name: 'Enter a name for the team' };
      flushSync(() => setLocalErrors(errors));
      focusFirstInvalid(formRef.current, errors, FIELDS);
      return;
    }
    setLocalErrors(null);
    onSubmit(parsed.data, () => form.reset());
  }

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="Create team" data-testid="create-team-form">
      {server.formError && !localErrors ? (
        <Alert tone="danger" role="alert" className="mb-4">
          {server.formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_auto] sm:items-start">
        <TextField
          id="team-name"
          name="name"
          label="Team name"
          placeholder="e.g. research"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={40}
          required
          hint="Appears in model names (team/project/model): lower-case letters, digits, “.”, “_” and “-”."
          error={fieldErrors.name}
          data-testid="team-name"
        />
        <Button type="submit" pending={pending} className="sm:mt-[26px]" data-testid="create-team">
          {pending ? null : <PlusIcon className="size-4" />}
          Create team
        </Button>
      </fieldset>
    </form>
  );
}
