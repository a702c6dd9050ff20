import Link from 'next/link';
import { buttonClassName } from '@/components/ui/button';
import { Logo } from '@/components/ui/logo';

export default function NotFound() {
  return (
    <main id="main" className="flex min-h-dvh flex-col items-center justify-center px-6 text-center">
      <Logo className="mb-10" />
      <p className="font-mono text-sm font-semibold text-accent-text">404</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight text-fg">Page not found</h1>
      <p className="mt-2 max-w-sm text-sm text-fg-muted">The page you asked for does not exist or has moved.</p>
      <Link href="/" className={`${buttonClassName()} mt-8`}>
        Back to Tuneboard
      </Link>
    </main>
  );
}
