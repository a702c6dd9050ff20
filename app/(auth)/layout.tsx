import Link from 'next/link';
import type { ReactNode } from 'react';
import { ThemeToggle } from '@/components/shell/theme-toggle';
import { Logo } from '@/components/ui/logo';

export default function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="relative flex min-h-dvh flex-col overflow-hidden">
      {/* A soft wash of the accent colour behind the card; decorative only. */}
      <div
        aria-hidden="true"
        className="pointer-events-none absolute inset-x-0 top-0 -z-10 h-[480px] bg-[radial-gradient(60%_60%_at_50%_0%,color-mix(in_oklab,var(--tb-accent)_14%,transparent),transparent)]"
      />
      <header className="flex items-center justify-between px-5 py-4 sm:px-8">
        <Link href="/" className="inline-flex rounded-lg" aria-label="Tuneboard home">
          <Logo />
        </Link>
        <ThemeToggle />
      </header>
      <main id="main" className="flex flex-1 items-start justify-center px-4 pt-6 pb-16 sm:pt-[9vh]">
        {children}
      </main>
      <footer className="px-5 pb-6 text-center text-xs text-fg-subtle">
        Tuneboard · self-hosted fine-tuning for language models
      </footer>
    </div>
  );
}
