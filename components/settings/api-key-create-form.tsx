'use client';

import type { z } from 'zod';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { SelectField, TextField } from '@/components/ui/field';
import { PlusIcon } from '@/components/ui/icons';
import { createApiKeyFormSchema } from '@/lib/client/forms/form-schemas';
import { useApiForm } from '@/lib/client/forms/use-api-form';

export type CreateApiKeyBody = z.output<typeof createApiKeyFormSchema>;

const EXPIRY_OPTIONS = [
  { value: '', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In 1 year' },
];

interface ApiKeyCreateFormProps {
  /** Creates the key; the form is cleared for the next one once it resolves. */
  onSubmit: (body: CreateApiKeyBody) => Promise<unknown>;
}

export function ApiKeyCreateForm({ onSubmit }: ApiKeyCreateFormProps) {
  const { submit, pending, formError, field } = useApiForm({
    schema: createApiKeyFormSchema,
    defaultValues: { name: '', expires_in_days: '' },
    onSubmit,
    resetOnSuccess: true,
  });

  return (
    <form onSubmit={submit} noValidate aria-label="Create API key" data-testid="create-api-key-form">
      {formError ? (
        <Alert tone="danger" role="alert" className="mb-4">
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={pending} className="grid gap-4 sm:grid-cols-[minmax(0,1fr)_11rem_auto] sm:items-start">
        <TextField
          id="api-key-name"
          label="Name"
          placeholder="e.g. laptop, ci-runner"
          maxLength={100}
          autoComplete="off"
          required
          data-testid="api-key-name"
          {...field('name')}
        />
        <SelectField id="api-key-expiry" label="Expires" data-testid="api-key-expiry" {...field('expires_in_days')}>
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
