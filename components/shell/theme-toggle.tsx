'use client';

import { useEffect } from 'react';
import { cx } from '@/components/ui/cx';
import { MoonIcon, SunIcon } from '@/components/ui/icons';
import { applyTheme, readStoredTheme, THEME_STORAGE_KEY } from './theme';

/**
 * Icon and label follow the `dark` class through CSS, not React state: the server cannot know the
 * theme, and state would render the wrong icon until hydration.
 */
export function ThemeToggle({ className }: { className?: string }) {
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
  }

  return (
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
  );
}
