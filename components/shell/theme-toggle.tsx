'use client';

import { useEffect, useSyncExternalStore } from 'react';
import { cx } from '@/components/ui/cx';
import { MonitorIcon, MoonIcon, SunIcon } from '@/components/ui/icons';
import { applyTheme, readStoredTheme, THEME_STORAGE_KEY } from './theme';

// A choice made or cleared in this tab (the storage event only reports other tabs).
const CHOICE_EVENT = 'tuneboard-theme-choice';

function subscribeChoice(onChange: () => void): () => void {
  window.addEventListener('storage', onChange);
  window.addEventListener(CHOICE_EVENT, onChange);
  return () => {
    window.removeEventListener('storage', onChange);
    window.removeEventListener(CHOICE_EVENT, onChange);
  };
}

/**
 * Icon and label follow the `dark` class through CSS, not React state: the server cannot know the
 * theme, and state would render the wrong icon until hydration. Once a theme is chosen, a second button
 * goes back to following the system (the third state); it only exists in the browser, after hydration.
 */
export function ThemeToggle({ className }: { className?: string }) {
  const chosen = useSyncExternalStore(subscribeChoice, readStoredTheme, () => null);
  useEffect(() => {
    const media = window.matchMedia('(prefers-color-scheme: dark)');
    // Without a stored choice the OS decides, live; a choice made in another tab applies here too.
    const sync = () => applyTheme(readStoredTheme() ?? (media.matches ? 'dark' : 'light'));
    media.addEventListener('change', sync);
    window.addEventListener('storage', sync);
    return () => {
      media.removeEventListener('change', sync);
      window.removeEventListener('storage', sync);
    };
  }, []);

  function toggle() {
    const next = document.documentElement.classList.contains('dark') ? 'light' : 'dark';
    try {
      localStorage.setItem(THEME_STORAGE_KEY, next);
    } catch {
      // Storage can be disabled; the theme still switches for this page view.
    }
    applyTheme(next);
    window.dispatchEvent(new Event(CHOICE_EVENT));
  }

  function followSystem() {
    try {
      localStorage.removeItem(THEME_STORAGE_KEY);
    } catch {
      // Nothing stored to forget.
    }
    applyTheme(window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
    window.dispatchEvent(new Event(CHOICE_EVENT));
  }

  return (
    <span className="inline-flex items-center">
      <button
        type="button"
        onClick={toggle}
        data-testid="theme-toggle"
        className={cx(
          'inline-flex size-8 items-center justify-center rounded-lg text-fg-muted transition-colors hover:bg-surface-muted hover:text-fg',
          className,
        )}
      >
        <MoonIcon className="size-4 dark:hidden" />
        <SunIcon className="hidden size-4 dark:block" />
        <span className="sr-only dark:hidden">Switch to dark theme</span>
        <span className="sr-only hidden dark:inline">Switch to light theme</span>
      </button>
      {chosen ? (
        <button
          type="button"
          onClick={followSystem}
          title="Follow the system theme"
          data-testid="theme-follow-system"
          className="inline-flex size-8 items-center justify-center rounded-lg text-fg-muted transition-colors hover:bg-surface-muted hover:text-fg"
        >
          <MonitorIcon className="size-4" />
          <span className="sr-only">Follow the system theme</span>
        </button>
      ) : null}
    </span>
  );
}
