'use client';

import { useState, type ReactNode } from 'react';
import { afterHydration } from './after-hydration';
import { buttonClassName, type ButtonSize, type ButtonVariant } from './button';
import { cx } from './cx';

export interface MenuItem {
  key: string;
  content: ReactNode;
  onSelect: () => void;
  'data-testid'?: string;
}

export interface MenuButtonProps {
  /** The trigger's accessible name. */
  label: string;
  /** The trigger's visible content (an icon, text or both). */
  children: ReactNode;
  items: MenuItem[];
  variant?: ButtonVariant;
  size?: ButtonSize;
  className?: string;
  menuClassName?: string;
  onOpenChange?: (open: boolean) => void;
  'data-testid'?: string;
}

/** What the stand-in button saw before the menu's code arrived, handed to the real one (menu-popup.tsx). */
export interface EarlyMenuState {
  /** Pressed: the menu opens as soon as it can. */
  openOnMount?: boolean;
  /** Focused: the real button takes the focus over, which would otherwise fall to the page's body. */
  focusOnMount?: boolean;
  onEarlyPress?: () => void;
  onEarlyFocus?: (focused: boolean) => void;
}

const LazyMenuButton = afterHydration<MenuButtonProps & EarlyMenuState>(
  () => import('./menu-popup'),
  ({ label, children, variant = 'ghost', size = 'sm', className, onEarlyPress, onEarlyFocus, ...rest }) => (
    <button
      type="button"
      aria-label={label}
      aria-haspopup="menu"
      aria-expanded={false}
      className={cx(buttonClassName({ variant, size }), className)}
      data-testid={rest['data-testid']}
      onClick={onEarlyPress}
      onFocus={() => onEarlyFocus?.(true)}
      onBlur={() => onEarlyFocus?.(false)}
    >
      {children}
    </button>
  ),
);

/**
 * A button that opens a menu (menu-popup.tsx, on Base UI). Its code loads after hydration; until then the same
 * button is drawn, closed. The real button replaces that one when the code comes: a press in between (a click, or
 * Enter or Space, which press a button too) opens the menu then instead of being lost, and focus moves across.
 */
export function MenuButton(props: MenuButtonProps) {
  const [pressed, setPressed] = useState(false);
  const [focused, setFocused] = useState(false);
  return (
    <LazyMenuButton
      {...props}
      openOnMount={pressed}
      focusOnMount={focused}
      onEarlyPress={() => setPressed(true)}
      onEarlyFocus={setFocused}
    />
  );
}
