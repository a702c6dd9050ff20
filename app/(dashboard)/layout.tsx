import type { ReactNode } from 'react';
import { requirePrincipal } from '@/app/_lib/session';
import { AppShell } from '@/components/shell/app-shell';
import { toSessionDto } from '@/lib/services/accounts';

/** Every dashboard page needs a signed-in user; this is the check (the API checks again on each call). */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const principal = await requirePrincipal();
  return <AppShell session={toSessionDto(principal)}>{children}</AppShell>;
}
