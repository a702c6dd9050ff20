'use client';

import { useId, useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import { addMemberBodySchema } from '@/lib/schemas/accounts';

const FIELDS = ['email', 'role'] as const;

export type AddMemberInput = { email: string; role: 'admin' | 'member' };

interface AddMemberFormProps {
  team: string;
  pending: boolean;
  error: unknown;
  onSubmit: (input: AddMemberInput, done: () => void) => void;
}

export function AddMemberForm({ team, pending, error, onSubmit }: AddMemberFormProps) {
  const id = useId();
  const formRef = useRef<HTMLFormElement>(null);
  const [localErrors, setLocalErrors] = useState<FieldErrors | null>(null);
  const server = error ? splitSubmitError(error, FIELDS) : { fieldErrors: {}, formError: null };
  const fieldErrors = localErrors ?? server.fieldErrors;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get('email') ?? '').trim();
    const parsed = addMemberBodySchema.safeParse({ email, role: String(data.get('role') ?? 'member') });
    if (!parsed.success || !email) {
      const errors = email
        ? parsed.success
          ? {}
          : zodFieldErrors(parsed.error)
        : { email: 'Enter the email of an existing user' };
      flushSync(() => setLocalErrors(errors));
      focusFirstInvalid(formRef.current, errors, FIELDS);
      return;
    }
    setLocalErrors(null);
    onSubmit(parsed.data, () => form.reset());
  }

  return (
    <form
      ref={formRef}
      onSubmit={submit}
      noValidate
      aria-label={`Add a member to ${team}`}
      data-testid="add-member-form"
    >
      {server.formError && !localErrors ? (
        <Alert tone="danger" role="alert" className="mb-3">
          {server.formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-3 sm:grid-cols-[minmax(0,1fr)_9rem_auto] sm:items-start">
        <TextField
          id={`${id}-email`}
          name="email"
          type="email"
          label="Add member"
          placeholder="colleague@example.com"
          autoComplete="off"
          spellCheck={false}
          hint="They need a Tuneboard account first."
          error={fieldErrors.email}
          data-testid="member-email"
        />
        <SelectField
          id={`${id}-role`}
          name="role"
          label="Role"
          defaultValue="member"
          error={fieldErrors.role}
          data-testid="member-role"
        >
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
