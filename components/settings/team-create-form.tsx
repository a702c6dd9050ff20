'use client';

import type { z } from 'zod';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { PlusIcon } from '@/components/ui/icons';
import { createTeamFormSchema } from '@/lib/client/forms/form-schemas';
import { useApiForm } from '@/lib/client/forms/use-api-form';

interface TeamCreateFormProps {
  /** Creates the team; the form is cleared once it resolves. */
  onSubmit: (body: z.output<typeof createTeamFormSchema>) => Promise<unknown>;
}

export function TeamCreateForm({ onSubmit }: TeamCreateFormProps) {
  const { submit, pending, formError, field } = useApiForm({
    schema: createTeamFormSchema,
    defaultValues: { name: '' },
    onSubmit,
    resetOnSuccess: true,
  });

  return (
    <form onSubmit={submit} noValidate aria-label="Create team" data-testid="create-team-form">
      {formError ? (
        <Alert tone="danger" role="alert" className="mb-4">
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_auto] sm:items-start">
        <TextField
          id="team-name"
          label="Team name"
          placeholder="e.g. research"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={40}
          required
          hint="Appears in model names (team/project/model): lower-case letters, digits, “.”, “_” and “-”."
          data-testid="team-name"
          {...field('name')}
        />
        <Button type="submit" pending={pending} className="sm:mt-[26px]" data-testid="create-team">
          {pending ? null : <PlusIcon className="size-4" />}
          Create team
        </Button>
      </fieldset>
    </form>
  );
}
