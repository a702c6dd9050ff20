import type { Metadata } from 'next';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { currentPrincipal } from '@/app/_lib/session';
import { hasAnyAccount } from '@/lib/services/accounts';
import { AuthCard } from '@/components/auth/auth-card';
import { SignInForm } from '@/components/auth/sign-in-form';
import { DEFAULT_SIGNED_IN_PATH, safeNextPath } from '@/lib/client/navigation/redirect-target';

export const metadata: Metadata = { title: 'Sign in' };

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = (await searchParams).next;
  const next = safeNextPath(typeof raw === 'string' ? raw : undefined);
  if (await currentPrincipal()) redirect(next);
  const signUpHref = next === DEFAULT_SIGNED_IN_PATH ? '/sign-up' : `/sign-up?next=${encodeURIComponent(next)}`;
  const firstRun = !(await hasAnyAccount());

  return (
    <AuthCard
      title="Sign in to Tuneboard"
      description={
        firstRun
          ? 'This server has no account yet: create the first one to start fine-tuning.'
          : 'Welcome back. Sign in to manage your models and API keys.'
      }
      footer={
        <>
          {firstRun ? 'First time here?' : 'New to Tuneboard?'}{' '}
          <Link
            href={signUpHref}
            className="font-medium text-accent-text hover:underline"
            data-testid="sign-in-create-account"
          >
            {firstRun ? 'Create the first account' : 'Create an account'}
          </Link>
        </>
      }
    >
      <SignInForm next={next} />
    </AuthCard>
  );
}
