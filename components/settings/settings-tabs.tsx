'use client';

import Link from 'next/link';
import { usePathname, useSearchParams } from 'next/navigation';
import { cx } from '@/components/ui/cx';
import { BarChartIcon, KeyIcon, UserIcon, UsersIcon } from '@/components/ui/icons';

const TABS = [
  { href: '/settings/api-keys', label: 'API keys', Icon: KeyIcon },
  { href: '/settings/teams', label: 'Teams', Icon: UsersIcon },
  { href: '/settings/profile', label: 'Profile', Icon: UserIcon },
  { href: '/settings/usage', label: 'Usage', Icon: BarChartIcon },
] as const;

export function SettingsTabs() {
  const pathname = usePathname();
  // Settings are not per entity, but the selection should survive a visit here.
  const query = useSearchParams().toString();
  return (
    <nav aria-label="Settings" className="mb-6 border-b border-line sm:mb-8">
      <ul className="-mb-px flex gap-1 overflow-x-auto">
        {TABS.map(({ href, label, Icon }) => {
          const active = pathname === href || pathname.startsWith(`${href}/`);
          return (
            <li key={href}>
              <Link
                href={query ? `${href}?${query}` : href}
                aria-current={active ? 'page' : undefined}
                className={cx(
                  'flex items-center gap-2 border-b-2 px-3 py-2.5 text-sm font-medium whitespace-nowrap transition-colors',
                  active
                    ? 'border-accent text-fg'
                    : 'border-transparent text-fg-muted hover:border-line-strong hover:text-fg',
                )}
              >
                <Icon className={cx('size-4', active ? 'text-accent-text' : 'text-fg-subtle')} />
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
