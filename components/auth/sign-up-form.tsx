'use client';

import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { signUpFormSchema } from '@/lib/client/forms/form-schemas';
import { useSignUp } from '@/lib/client/queries/mutations';
import { useApiForm } from '@/lib/client/forms/use-api-form';

export function SignUpForm({ next, signInHref }: { next: string; signInHref: string }) {
  const router = useRouter();
  const signUp = useSignUp();
  const { submit, pending, formError, field } = useApiForm({
    schema: signUpFormSchema,
    defaultValues: { name: '', email: '', username: '', password: '' },
    onSubmit: async (body) => {
      await signUp.mutateAsync(body);
      router.replace(next);
    },
  });

  const busy = pending || signUp.isSuccess;
  const emailTaken =
    isApiClientError(signUp.error) && signUp.error.status === 409 && /email/i.test(signUp.error.message);

  return (
    <form onSubmit={submit} noValidate aria-label="Create account" data-testid="sign-up-form">
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
        <TextField id="sign-up-name" label="Name" autoComplete="name" optional {...field('name')} />
        <TextField
          id="sign-up-email"
          type="email"
          label="Email"
          autoComplete="email"
          inputMode="email"
          spellCheck={false}
          required
          {...field('email')}
        />
        <TextField
          id="sign-up-username"
          label="Username"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          optional
          hint="Your handle in model names (username/project/model). Lower-case letters, digits, “.”, “_” and “-”. Taken from your email if left empty."
          {...field('username')}
        />
        <TextField
          id="sign-up-password"
          type="password"
          label="Password"
          autoComplete="new-password"
          required
          minLength={8}
          hint="At least 8 characters."
          {...field('password')}
        />
        <Button type="submit" pending={busy} className="mt-2 w-full">
          {busy ? 'Creating account…' : 'Create account'}
        </Button>
      </fieldset>
    </form>
  );
}
