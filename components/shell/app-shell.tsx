'use client';

import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { cx } from '@/components/ui/cx';
import { CloseIcon, MenuIcon, SearchIcon } from '@/components/ui/icons';
import { Logo } from '@/components/ui/logo';
import { ENTITY_PARAM, hrefWithEntity, resolveEntity } from '@/lib/client/navigation/entity';
import type { SessionDto } from '@/lib/schemas/accounts';
import { Avatar } from './avatar';
import { CommandPalette } from './command-palette';
import { EntitySwitcher } from './entity-switcher';
import { isActivePath, NAV_ITEMS } from './nav-items';
import { ShortcutsDialog } from './shortcuts-dialog';
import { SignOutButton } from './sign-out-button';
import { ThemeToggle } from './theme-toggle';
import { useGlobalShortcuts } from './use-global-shortcuts';

interface SidebarProps {
  session: SessionDto;
  entity: string;
  idPrefix: string;
  onNavigate?: () => void;
  onOpenPalette: () => void;
  onOpenHelp: () => void;
  modLabel: string;
}

function SidebarContent({ session, entity, idPrefix, onNavigate, onOpenPalette, onOpenHelp, modLabel }: SidebarProps) {
  const pathname = usePathname();
  return (
    <div className="flex h-full flex-col">
      <div className="px-3">
        <EntitySwitcher session={session} selected={entity} id={`${idPrefix}-entity`} />
      </div>
      <div className="mt-3 px-3">
        <button
          type="button"
          onClick={onOpenPalette}
          data-testid="open-command-palette"
          aria-keyshortcuts={modLabel === '⌘' ? 'Meta+K' : 'Control+K'}
          className="flex h-9 w-full items-center gap-2 rounded-lg border border-line bg-surface px-2.5 text-sm text-fg-subtle shadow-xs transition-colors hover:bg-surface-muted hover:text-fg-muted"
        >
          <SearchIcon className="size-4" />
          <span className="flex-1 text-left">Jump to…</span>
          <kbd className="rounded border border-line px-1 font-sans text-[11px]">{modLabel} K</kbd>
        </button>
      </div>
      <nav aria-label="Main" className="mt-5 flex-1 px-3">
        <ul className="flex flex-col gap-0.5">
          {NAV_ITEMS.map(({ href, section, label, Icon }) => {
            const active = isActivePath(pathname, section);
            return (
              <li key={href}>
                <Link
                  href={hrefWithEntity(href, entity, session.default_entity)}
                  aria-current={active ? 'page' : undefined}
                  onClick={onNavigate}
                  className={cx(
                    'group flex items-center gap-2.5 rounded-lg px-2.5 py-2 text-sm font-medium transition-colors',
                    active ? 'bg-surface-muted text-fg' : 'text-fg-muted hover:bg-surface-muted/70 hover:text-fg',
                  )}
                >
                  <Icon
                    className={cx('size-4', active ? 'text-accent-text' : 'text-fg-subtle group-hover:text-fg-muted')}
                  />
                  {label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <div className="mt-4 border-t border-line px-3 pt-3 pb-3">
        <div className="flex items-center gap-2.5 px-1 py-1.5">
          <Avatar name={session.user.name || session.user.email} />
          <div className="min-w-0 flex-1">
            <p className="truncate text-sm font-medium text-fg">{session.user.name}</p>
            <p className="truncate text-xs text-fg-subtle" data-testid="user-email">
              {session.user.email}
            </p>
          </div>
          <ThemeToggle />
        </div>
        <div className="mt-1 flex items-center gap-2">
          {/* The sign-out button fills its box; this box leaves room for the shortcuts button beside it. */}
          <div className="min-w-0 flex-1">
            <SignOutButton />
          </div>
          <button
            type="button"
            onClick={onOpenHelp}
            aria-keyshortcuts="?"
            data-testid="open-shortcuts"
            className="shrink-0 rounded-lg px-2 py-1.5 text-xs whitespace-nowrap text-fg-subtle transition-colors hover:bg-surface-muted hover:text-fg"
          >
            Shortcuts <kbd className="ml-1 rounded border border-line px-1 font-sans">?</kbd>
          </button>
        </div>
      </div>
    </div>
  );
}

/**
 * The dashboard frame: a fixed sidebar from 1280 px, a top bar with a disclosure menu below. At 1024 px the
 * sidebar left the pages 688 px, in which the models, checkpoints, jobs and API-key tables scrolled sideways
 * by 250–420 px; without it they get the width they have at 1280 px. The selected entity comes from `?entity=`
 * (see lib/client/navigation/entity.ts).
 */
export function AppShell({ session, children }: { session: SessionDto; children: ReactNode }) {
  const searchParams = useSearchParams();
  const entity = resolveEntity(session, searchParams.get(ENTITY_PARAM));
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  // Escape closes the mobile menu, as it closes every other overlay, and focus returns to its button.
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setMenuOpen(false);
      menuButton.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [menuOpen]);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const router = useRouter();
  const modLabel = useGlobalShortcuts({
    onTogglePalette: () => {
      setHelpOpen(false);
      setPaletteOpen((open) => !open);
    },
    onHelp: () => setHelpOpen(true),
    onGoTo: (path) => router.push(hrefWithEntity(path, entity, session.default_entity)),
  });
  const overlays = {
    onOpenPalette: () => {
      setMenuOpen(false);
      setPaletteOpen(true);
    },
    onOpenHelp: () => {
      setMenuOpen(false);
      setHelpOpen(true);
    },
    modLabel,
  };

  return (
    <div className="min-h-dvh xl:flex">
      <a
        href="#main"
        className="sr-only rounded-lg bg-accent px-4 py-2 text-sm font-medium text-accent-fg focus:not-sr-only focus:fixed focus:top-3 focus:left-3 focus:z-50"
      >
        Skip to content
      </a>

      {/* The aside stretches to the page's height (background and border reach the bottom); its content sticks. */}
      <aside className="hidden w-64 shrink-0 border-r border-line bg-surface xl:block">
        <div className="sticky top-0 flex h-dvh flex-col overflow-y-auto pt-5">
          <div className="mb-6 px-5">
            <Link href={hrefWithEntity('/models', entity, session.default_entity)} className="inline-flex rounded-lg">
              <Logo />
            </Link>
          </div>
          <div className="min-h-0 flex-1">
            <SidebarContent session={session} entity={entity} idPrefix="sidebar" {...overlays} />
          </div>
        </div>
      </aside>

      <div className="sticky top-0 z-30 border-b border-line bg-surface/90 backdrop-blur xl:hidden">
        <div className="flex h-14 items-center justify-between px-4">
          <Link href={hrefWithEntity('/models', entity, session.default_entity)} className="inline-flex rounded-lg">
            <Logo />
          </Link>
          <button
            ref={menuButton}
            type="button"
            aria-expanded={menuOpen}
            aria-controls="mobile-menu"
            onClick={() => setMenuOpen((open) => !open)}
            className="inline-flex size-9 items-center justify-center rounded-lg text-fg-muted hover:bg-surface-muted hover:text-fg"
          >
            {menuOpen ? <CloseIcon className="size-5" /> : <MenuIcon className="size-5" />}
            <span className="sr-only">{menuOpen ? 'Close menu' : 'Open menu'}</span>
          </button>
        </div>
        {menuOpen ? (
          <div id="mobile-menu" className="border-t border-line pt-4">
            <SidebarContent
              session={session}
              entity={entity}
              idPrefix="mobile"
              onNavigate={() => setMenuOpen(false)}
              {...overlays}
            />
          </div>
        ) : null}
      </div>

      <div className="min-w-0 flex-1">
        <main
          id="main"
          tabIndex={-1}
          className="mx-auto w-full max-w-6xl px-4 py-6 focus:outline-none sm:px-6 sm:py-8 lg:px-10 lg:py-10"
        >
          {children}
        </main>
      </div>
      <CommandPalette open={paletteOpen} onClose={() => setPaletteOpen(false)} session={session} entity={entity} />
      <ShortcutsDialog open={helpOpen} onClose={() => setHelpOpen(false)} modLabel={modLabel} />
    </div>
  );
}
