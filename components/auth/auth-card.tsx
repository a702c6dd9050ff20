import type { ReactNode } from 'react';

interface AuthCardProps {
  title: string;
  description: ReactNode;
  children: ReactNode;
  footer: ReactNode;
}

export function AuthCard({ title, description, children, footer }: AuthCardProps) {
  return (
    <div className="w-full max-w-[400px]">
      <div className="rounded-2xl border border-line bg-surface p-6 shadow-[0_1px_2px_rgb(0_0_0/0.04),0_8px_24px_-6px_rgb(0_0_0/0.08)] sm:p-8 dark:shadow-none">
        <h1 className="text-xl font-semibold tracking-tight text-fg">{title}</h1>
        <p className="mt-1.5 text-sm text-fg-muted">{description}</p>
        <div className="mt-6">{children}</div>
      </div>
      <p className="mt-6 text-center text-sm text-fg-muted">{footer}</p>
    </div>
  );
}
