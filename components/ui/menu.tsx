'use client';

import type { ReactNode } from 'react';
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

/**
 * A button that opens a menu (menu-popup.tsx, on Base UI). Its code loads after hydration; until then the same
 * button is drawn, closed.
 */
export const MenuButton = afterHydration<MenuButtonProps>(
  () => import('./menu-popup'),
  ({ label, children, variant = 'ghost', size = 'sm', className, ...rest }) => (
    <button
      type="button"
      aria-label={label}
      aria-haspopup="menu"
      aria-expanded={false}
      className={cx(buttonClassName({ variant, size }), className)}
      data-testid={rest['data-testid']}
    >
      {children}
    </button>
  ),
);
