'use client';

import { useRouter } from 'next/navigation';
import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import { useSignIn } from '@/lib/client/mutations';
import { signInBodySchema } from '@/lib/schemas/accounts';

const FIELDS = ['email', 'password'] as const;

export function SignInForm({ next }: { next: string }) {
  const router = useRouter();
  const formRef = useRef<HTMLFormElement>(null);
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);

  const signIn = useSignIn();
  const onError = (error: unknown) => {
    const split = splitSubmitError(error, FIELDS);
    flushSync(() => {
      setFieldErrors(split.fieldErrors);
      setFormError(split.formError);
    });
    focusFirstInvalid(formRef.current, split.fieldErrors, FIELDS);
  };

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const email = String(data.get('email') ?? '');
    const password = String(data.get('password') ?? '');
    const errors: FieldErrors = {};
    if (!email.trim()) errors.email = 'Enter your email address';
    if (!password) errors.password = 'Enter your password';
    const parsed = signInBodySchema.safeParse({ email, password });
    const all = { ...(parsed.success ? {} : zodFieldErrors(parsed.error)), ...errors };
    flushSync(() => {
      setFieldErrors(all);
      setFormError(null);
    });
    if (Object.keys(all).length > 0 || !parsed.success) {
      focusFirstInvalid(formRef.current, all, FIELDS);
      return;
    }
    signIn.mutate(parsed.data, { onSuccess: () => router.replace(next), onError });
  }

  // Stays disabled after success too, while the next page loads.
  const busy = signIn.isPending || signIn.isSuccess;

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="Sign in" data-testid="sign-in-form">
      {formError ? (
        <Alert tone="danger" role="alert" className="mb-5" id="sign-in-error">
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={busy} className="flex flex-col gap-4">
        <TextField
          id="sign-in-email"
          name="email"
          type="email"
          label="Email"
          autoComplete="email"
          inputMode="email"
          spellCheck={false}
          required
          error={fieldErrors.email}
        />
        <TextField
          id="sign-in-password"
          name="password"
          type="password"
          label="Password"
          autoComplete="current-password"
          required
          error={fieldErrors.password}
        />
        <Button type="submit" pending={busy} className="mt-2 w-full">
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
      </fieldset>
    </form>
  );
}
