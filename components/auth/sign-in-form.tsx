'use client';

import { useRouter } from 'next/navigation';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { TextField } from '@/components/ui/field';
import { signInFormSchema } from '@/lib/client/forms/form-schemas';
import { useSignIn } from '@/lib/client/queries/mutations';
import { useApiForm } from '@/lib/client/forms/use-api-form';

export function SignInForm({ next }: { next: string }) {
  const router = useRouter();
  const signIn = useSignIn();
  const { submit, pending, formError, field } = useApiForm({
    schema: signInFormSchema,
    defaultValues: { email: '', password: '' },
    onSubmit: async (body) => {
      await signIn.mutateAsync(body);
      router.replace(next);
    },
  });

  // Stays disabled after success too, while the next page loads.
  const busy = pending || signIn.isSuccess;

  return (
    <form onSubmit={submit} noValidate aria-label="Sign in" data-testid="sign-in-form">
      {formError ? (
        <Alert tone="danger" role="alert" className="mb-5" id="sign-in-error">
          {formError}
        </Alert>
      ) : null}
      <fieldset disabled={busy} className="flex flex-col gap-4">
        <TextField
          id="sign-in-email"
          type="email"
          label="Email"
          autoComplete="email"
          inputMode="email"
          spellCheck={false}
          required
          {...field('email')}
        />
        <TextField
          id="sign-in-password"
          type="password"
          label="Password"
          autoComplete="current-password"
          required
          {...field('password')}
        />
        <Button type="submit" pending={busy} className="mt-2 w-full">
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
      </fieldset>
    </form>
  );
}
