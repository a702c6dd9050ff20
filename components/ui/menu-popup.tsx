'use client';

import { Menu } from '@base-ui/react/menu';
import { useEffect, useId, useRef } from 'react';
import { buttonClassName } from './button';
import type { EarlyMenuState, MenuButtonProps } from './menu';
import { cx } from './cx';

/**
 * A button that opens a menu (WAI-ARIA menu button, by Base UI): Enter, Space or ↓ opens it on the first item;
 * ↑/↓/Home/End move and wrap; Enter or Space picks; Escape closes and focus goes back to the button. The menu
 * floats in a portal so that a scrolling table does not clip it, and flips to stay on screen.
 */
export default function MenuPopup({
  label,
  children,
  items,
  variant = 'ghost',
  size = 'sm',
  className,
  menuClassName,
  onOpenChange,
  openOnMount = false,
  focusOnMount = false,
  ...rest
}: MenuButtonProps & EarlyMenuState) {
  const triggerId = useId();
  const trigger = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    // The stand-in (menu.tsx) was pressed or focused before this code came: carry on from there, once.
    if (focusOnMount && !openOnMount) trigger.current?.focus();
    // defaultOpen does not call onOpenChange.
    if (openOnMount) onOpenChange?.(true);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <Menu.Root
      onOpenChange={(open) => onOpenChange?.(open)}
      loopFocus
      defaultOpen={openOnMount}
      defaultTriggerId={openOnMount ? triggerId : undefined}
    >
      <Menu.Trigger
        ref={trigger}
        id={triggerId}
        aria-label={label}
        className={cx(buttonClassName({ variant, size }), className)}
        data-testid={rest['data-testid']}
      >
        {children}
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Positioner side="bottom" align="end" sideOffset={3} collisionPadding={8} className="z-50">
          <Menu.Popup
            aria-label={label}
            className={cx(
              'flex max-w-[min(34rem,calc(100vw-1rem))] min-w-56 flex-col rounded-lg border border-line bg-surface-raised p-1 shadow-lg outline-none',
              menuClassName,
            )}
          >
            {items.map((item) => (
              <Menu.Item
                key={item.key}
                className="flex flex-col items-start gap-0.5 rounded-md px-2.5 py-1.5 text-left text-[13px] text-fg outline-none select-none data-[highlighted]:bg-surface-muted data-[highlighted]:ring-2 data-[highlighted]:ring-ring"
                onClick={() => item.onSelect()}
                data-testid={item['data-testid']}
              >
                {item.content}
              </Menu.Item>
            ))}
          </Menu.Popup>
        </Menu.Positioner>
      </Menu.Portal>
    </Menu.Root>
  );
}
