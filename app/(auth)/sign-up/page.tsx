import type { Metadata } from 'next';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { currentPrincipal } from '@/app/_lib/session';
import { AuthCard } from '@/components/auth/auth-card';
import { SignUpForm } from '@/components/auth/sign-up-form';
import { safeNextPath, signInPath } from '@/lib/client/navigation/redirect-target';

export const metadata: Metadata = { title: 'Create account' };

export default async function SignUpPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = (await searchParams).next;
  const next = safeNextPath(typeof raw === 'string' ? raw : undefined);
  if (await currentPrincipal()) redirect(next);
  const signInHref = signInPath(next);

  return (
    <AuthCard
      title="Create your account"
      description="Fine-tune and serve language models on your own hardware."
      footer={
        <>
          Already have an account?{' '}
          <Link href={signInHref} className="font-medium text-accent-text hover:underline">
            Sign in
          </Link>
        </>
      }
    >
      <SignUpForm next={next} signInHref={signInHref} />
    </AuthCard>
  );
}
