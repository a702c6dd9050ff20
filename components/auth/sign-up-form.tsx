'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { isApiClientError } from '@/lib/client/api-fetch';
import { focusFirstInvalid, splitSubmitError, zodFieldErrors, type FieldErrors } from '@/lib/client/form-errors';
import { useSignUp } from '@/lib/client/mutations';
import { signUpBodySchema } from '@/lib/schemas/accounts';

const FIELDS = ['name', 'email', 'username', 'password'] as const;

export function SignUpForm({ next, signInHref }: { next: string; signInHref: string }) {
  const router = useRouter();
  const formRef = useRef<HTMLFormElement>(null);
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [emailTaken, setEmailTaken] = useState(false);

  const signUp = useSignUp();
  const onError = (error: unknown) => {
    const split = splitSubmitError(error, FIELDS);
    flushSync(() => {
      setFieldErrors(split.fieldErrors);
      setFormError(split.formError);
      setEmailTaken(isApiClientError(error) && error.status === 409 && /email/i.test(error.message));
    });
    focusFirstInvalid(formRef.current, split.fieldErrors, FIELDS);
  };

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const text = (key: string) => String(data.get(key) ?? '').trim();
    const input = {
      name: text('name') || undefined,
      email: text('email'),
      username: text('username') || undefined,
      password: String(data.get('password') ?? ''),
    };
    const errors: FieldErrors = {};
    if (!input.email) errors.email = 'Enter your email address';
    if (!input.password) errors.password = 'Choose a password';
    const parsed = signUpBodySchema.safeParse(input);
    const all = { ...(parsed.success ? {} : zodFieldErrors(parsed.error)), ...errors };
    flushSync(() => {
      setFieldErrors(all);
      setFormError(null);
      setEmailTaken(false);
    });
    if (Object.keys(all).length > 0 || !parsed.success) {
      focusFirstInvalid(formRef.current, all, FIELDS);
      return;
    }
    signUp.mutate(parsed.data, { onSuccess: () => router.replace(next), onError });
  }

  const busy = signUp.isPending || signUp.isSuccess;

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="Create account" data-testid="sign-up-form">
      {formError ? (
        <Alert
          tone="danger"
          role="alert"
          className="mb-5"
          actions={
            emailTaken ? (
              <Link href={signInHref} className="font-medium underline underline-offset-2">
                Sign in instead
              </Link>
            ) : null
          }
        >
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={busy} className="flex flex-col gap-4">
        <TextField id="sign-up-name" name="name" label="Name" autoComplete="name" optional error={fieldErrors.name} />
        <TextField
          id="sign-up-email"
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
          id="sign-up-username"
          name="username"
          label="Username"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          optional
          hint="Your handle in model names (username/project/model). Lower-case letters, digits, “.”, “_” and “-”. Taken from your email if left empty."
          error={fieldErrors.username}
        />
        <TextField
          id="sign-up-password"
          name="password"
          type="password"
          label="Password"
          autoComplete="new-password"
          required
          minLength={8}
          hint="At least 8 characters."
          error={fieldErrors.password}
        />
        <Button type="submit" pending={busy} className="mt-2 w-full">
          {busy ? 'Creating account…' : 'Create account'}
        </Button>
      </fieldset>
    </form>
  );
}
