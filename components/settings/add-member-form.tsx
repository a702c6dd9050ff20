'use client';

import { useId } from 'react';
import type { z } from 'zod';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { addMemberFormSchema } from '@/lib/client/forms/form-schemas';
import { useApiForm } from '@/lib/client/forms/use-api-form';

export type AddMemberBody = z.output<typeof addMemberFormSchema>;

interface AddMemberFormProps {
  team: string;
  /** Adds the member; the form is cleared once it resolves. */
  onSubmit: (body: AddMemberBody) => Promise<unknown>;
}

export function AddMemberForm({ team, onSubmit }: AddMemberFormProps) {
  const id = useId();
  const { submit, pending, formError, field } = useApiForm({
    schema: addMemberFormSchema,
    defaultValues: { email: '', role: 'member' },
    onSubmit,
    resetOnSuccess: true,
  });

  return (
    <form onSubmit={submit} noValidate aria-label={`Add a member to ${team}`} data-testid="add-member-form">
      {formError ? (
        <Alert tone="danger" role="alert" className="mb-3">
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-3 sm:grid-cols-[minmax(0,1fr)_9rem_auto] sm:items-start">
        <TextField
          id={`${id}-email`}
          type="email"
          label="Add member"
          placeholder="colleague@example.com"
          autoComplete="off"
          spellCheck={false}
          hint="They need a Tuneboard account first."
          data-testid="member-email"
          {...field('email')}
        />
        <SelectField id={`${id}-role`} label="Role" data-testid="member-role" {...field('role')}>
          <option value="member">Member</option>
          <option value="admin">Admin</option>
        </SelectField>
        <Button type="submit" variant="secondary" pending={pending} className="sm:mt-[26px]" data-testid="add-member">
          Add
        </Button>
      </fieldset>
    </form>
  );
}
