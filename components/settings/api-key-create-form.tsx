'use client';

import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { PlusIcon } from '@/components/ui/icons';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import { createApiKeyBodySchema } from '@/lib/schemas/accounts';

export type CreateApiKeyInput = { name: string; expires_in_days?: number | null };

const FIELDS = ['name', 'expires_in_days'] as const;

const EXPIRY_OPTIONS = [
  { value: '', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In 1 year' },
];

interface ApiKeyCreateFormProps {
  pending: boolean;
  error: unknown;
  onSubmit: (input: CreateApiKeyInput, done: () => void) => void;
}

export function ApiKeyCreateForm({ pending, error, onSubmit }: ApiKeyCreateFormProps) {
  const formRef = useRef<HTMLFormElement>(null);
  const [localErrors, setLocalErrors] = useState<FieldErrors | null>(null);
  const server = error ? splitSubmitError(error, FIELDS) : { fieldErrors: {}, formError: null };
  // Errors of this attempt's client-side check win; otherwise show what the server said.
  const fieldErrors = localErrors ?? server.fieldErrors;

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const name = String(data.get('name') ?? '').trim();
    const expiry = String(data.get('expires_in_days') ?? '');
    const parsed = createApiKeyBodySchema.safeParse({ name, expires_in_days: expiry ? Number(expiry) : null });
    const errors: FieldErrors = parsed.success ? {} : zodFieldErrors(parsed.error);
    if (!name) errors.name = 'Give the key a name, such as the machine or script that will use it';
    if (!parsed.success || Object.keys(errors).length > 0) {
      flushSync(() => setLocalErrors(errors));
      focusFirstInvalid(formRef.current, errors, FIELDS);
      return;
    }
    setLocalErrors(null);
    onSubmit(parsed.data, () => form.reset());
  }

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="Create API key" data-testid="create-api-key-form">
      {server.formError && !localErrors ? (
        <Alert tone="danger" role="alert" className="mb-4">
          {server.formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_11rem_auto] sm:items-start">
        <TextField
          id="api-key-name"
          name="name"
          label="Name"
          placeholder="e.g. laptop, ci-runner"
          maxLength={100}
          autoComplete="off"
          required
          error={fieldErrors.name}
          data-testid="api-key-name"
        />
        <SelectField
          id="api-key-expiry"
          name="expires_in_days"
          label="Expires"
          defaultValue=""
          error={fieldErrors.expires_in_days}
          data-testid="api-key-expiry"
        >
          {EXPIRY_OPTIONS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </SelectField>
        <Button type="submit" pending={pending} className="sm:mt-[26px]" data-testid="create-api-key">
          {pending ? null : <PlusIcon className="size-4" />}
          Create key
        </Button>
      </fieldset>
    </form>
  );
}
