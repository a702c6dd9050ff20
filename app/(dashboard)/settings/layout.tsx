import type { ReactNode } from 'react';
import { SettingsTabs } from '@/components/settings/settings-tabs';
import { PageHeader } from '@/components/ui/page-header';

export default function SettingsLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <PageHeader title="Settings" description="API keys, teams and your account." />
      <SettingsTabs />
      {children}
    </>
  );
}
