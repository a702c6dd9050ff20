'use client';

import { useEffect, useRef, useSyncExternalStore } from 'react';
import { GO_TO, isApplePlatform, isModKey, isTypingTarget } from '@/lib/client/navigation/shortcuts';

const noSubscription = () => () => {};

/** How long after `g` the second key of a go-to shortcut is awaited. */
const SEQUENCE_MS = 1500;

interface Handlers {
  onTogglePalette: () => void;
  onHelp: () => void;
  onGoTo: (path: string) => void;
}

/**
 * The shell's keyboard shortcuts (lib/client/navigation/shortcuts.ts). Ctrl/⌘+K works everywhere, even in a text
 * field; single keys (`?`, `g m`…) only when the user is not typing and no dialog is open.
 * Returns the label of the modifier key on this platform (⌘ or Ctrl).
 */
export function useGlobalShortcuts(handlers: Handlers): string {
  // The server cannot know the platform: it renders "Ctrl", and the browser corrects it after hydration.
  const apple = useSyncExternalStore(
    noSubscription,
    () => isApplePlatform(navigator.platform),
    () => false,
  );
  const latest = useRef(handlers);
  useEffect(() => {
    latest.current = handlers;
  });

  useEffect(() => {
    const isApple = isApplePlatform(navigator.platform);
    let pendingG = 0;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing) return;
      if (event.key.toLowerCase() === 'k' && isModKey(event, isApple) && !event.altKey && !event.shiftKey) {
        event.preventDefault();
        latest.current.onTogglePalette();
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (isTypingTarget(event.target) || document.querySelector('dialog[open]')) return;
      if (event.key === '?') {
        event.preventDefault();
        latest.current.onHelp();
        return;
      }
      const key = event.key.toLowerCase();
      if (pendingG && Date.now() - pendingG < SEQUENCE_MS && GO_TO[key]) {
        pendingG = 0;
        event.preventDefault();
        latest.current.onGoTo(GO_TO[key].path);
        return;
      }
      pendingG = key === 'g' && !event.shiftKey ? Date.now() : 0;
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);

  return apple ? '⌘' : 'Ctrl';
}
