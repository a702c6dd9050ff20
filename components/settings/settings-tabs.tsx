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
      {/* On a phone the tabs lose their icons and some padding, so that all four fit a 320 px screen instead of
          the last one being cut off; the list still scrolls sideways should a font be wider. */}
      <ul className="-mb-px flex gap-1 overflow-x-auto max-sm:gap-0">
        {TABS.map(({ href, label, Icon }) => {
          const active = pathname === href || pathname.startsWith(`${href}/`);
          return (
            <li key={href}>
              <Link
                href={query ? `${href}?${query}` : href}
                aria-current={active ? 'page' : undefined}
                className={cx(
                  'flex items-center gap-2 border-b-2 px-3 py-2.5 text-sm font-medium whitespace-nowrap transition-colors max-sm:px-2.5',
                  active
                    ? 'border-accent text-fg'
                    : 'border-transparent text-fg-muted hover:border-line-strong hover:text-fg',
                )}
              >
                <Icon className={cx('size-4 max-sm:hidden', active ? 'text-accent-text' : 'text-fg-subtle')} />
                {label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
