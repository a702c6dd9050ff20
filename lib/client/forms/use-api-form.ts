'use client';

import { useEffect, useRef, useState, type FormEvent } from 'react';
import { get, useForm, type DefaultValues, type FieldValues, type Mode, type Path } from 'react-hook-form';
import type { z } from 'zod';
import { contractResolver, splitSubmitError } from './form-errors';

export interface ApiFormOptions<TValues extends FieldValues, TBody> {
  /** The form's schema: its input is what the fields hold, its output the request body (or what builds it). */
  schema: z.ZodType<TBody, TValues>;
  /** Every field, in the order of the form: a refused request moves focus to the first field it names. */
  defaultValues: TValues;
  /** Sends the body; a rejection (an ApiClientError) is shown in the form, never thrown further. */
  onSubmit: (body: TBody) => Promise<unknown>;
  /** Request fields whose input has another name here, for the server's 422s (`config.epochs` → `epochs`). */
  serverFields?: Readonly<Record<string, Path<TValues>>>;
  /** Whether the form-wide error line names the request field of errors that no input shows (default true). */
  namedFields?: boolean;
  /** Back to the default values after a successful submit (a form that stays on the page for the next one). */
  resetOnSuccess?: boolean;
  /** When fields are checked: on submit (then again on each change), or from the first change on. */
  mode?: Extract<Mode, 'onSubmit' | 'onChange'>;
}

/**
 * A form whose fields are checked with the request body's zod schema before anything is sent, and whose server
 * errors land where a person looks for them: a 422 on a field next to that field (focused), anything else in one
 * line for the whole form. `field(name)` gives a TextField or SelectField its input wiring and its error.
 */
export function useApiForm<TValues extends FieldValues, TBody>({
  schema,
  defaultValues,
  onSubmit,
  serverFields = {},
  namedFields = true,
  resetOnSuccess = false,
  mode = 'onSubmit',
}: ApiFormOptions<TValues, TBody>) {
  const form = useForm<TValues, unknown, TBody>({
    resolver: contractResolver(schema),
    defaultValues: defaultValues as DefaultValues<TValues>,
    mode,
  });
  // Not formState.isSubmitting, which is also true while the fields are checked: the fields are disabled only
  // while a request is out, so that a check that fails can focus its field.
  const [pending, setPending] = useState(false);
  // Kept out of react-hook-form's errors: a root error there would mark the whole form invalid until a change.
  const [formError, setFormError] = useState<string | null>(null);
  const focusAfterRender = useRef<Path<TValues> | null>(null);

  // A refused request's errors arrive while the fields are still disabled (focus would not move): focus the first
  // one once they are enabled again.
  useEffect(() => {
    if (pending || focusAfterRender.current === null) return;
    form.setFocus(focusAfterRender.current);
    focusAfterRender.current = null;
  });

  function showError(error: unknown) {
    const fields = Object.keys(defaultValues);
    const split = splitSubmitError(error, fields, { rename: serverFields, namedFields });
    for (const field of fields) {
      const message = split.fieldErrors[field];
      if (message) form.setError(field as Path<TValues>, { type: 'server', message });
    }
    setFormError(split.formError);
    focusAfterRender.current = (fields.find((field) => split.fieldErrors[field]) as Path<TValues> | undefined) ?? null;
  }

  async function submit(event?: FormEvent) {
    setFormError(null);
    // Set inside handleSubmit's callback, which runs only when the fields pass their checks.
    let outcome = null as { ok: true } | { ok: false; error: unknown } | null;
    await form.handleSubmit(async (body) => {
      setPending(true);
      try {
        await onSubmit(body);
        outcome = { ok: true };
      } catch (error) {
        outcome = { ok: false, error };
      } finally {
        setPending(false);
      }
    })(event);
    if (outcome?.ok === false) showError(outcome.error);
    else if (outcome?.ok && resetOnSuccess) form.reset();
  }

  const errors = form.formState.errors;
  return {
    form,
    /** The form's onSubmit. */
    submit,
    /** A request is out: disable the fields and show the button's spinner. */
    pending,
    /** What went wrong that no single field shows, or null. */
    formError,
    /** Props for a TextField or SelectField: the input's registration and its current error. */
    field: (name: Path<TValues>) => ({
      ...form.register(name),
      error: (get(errors, name) as { message?: string } | undefined)?.message,
    }),
  };
}
