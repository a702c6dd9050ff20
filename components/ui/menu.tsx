'use client';

import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { buttonClassName, type ButtonSize, type ButtonVariant } from './button';
import { cx } from './cx';
import { useFloatingStyle } from './floating';

export interface MenuItem {
  key: string;
  content: ReactNode;
  onSelect: () => void;
  'data-testid'?: string;
}

interface MenuButtonProps {
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
 * A button that opens a menu (WAI-ARIA menu button): Enter, Space or ↓ opens it on the first item, ↑ on
 * the last; ↑/↓/Home/End move; Enter or Space picks; Escape or Tab closes and focus goes back to the button.
 * The menu floats in a portal so that a scrolling table does not clip it.
 */
export function MenuButton({
  label,
  children,
  items,
  variant = 'ghost',
  size = 'sm',
  className,
  menuClassName,
  onOpenChange,
  ...rest
}: MenuButtonProps) {
  const id = useId();
  const [open, setOpenState] = useState(false);
  const [focusIndex, setFocusIndex] = useState(0);
  const trigger = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const style = useFloatingStyle(open, trigger, menu, 'bottom-end');

  function setOpen(next: boolean) {
    setOpenState(next);
    onOpenChange?.(next);
  }

  function openAt(index: number) {
    setFocusIndex(index);
    setOpen(true);
  }

  function close(returnFocus: boolean) {
    setOpen(false);
    if (returnFocus) trigger.current?.focus();
  }

  // Focus follows the active item once the menu is placed (a hidden element cannot take focus).
  const placed = open && style.visibility === 'visible';
  useEffect(() => {
    if (!placed) return;
    menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]')[focusIndex]?.focus();
  }, [placed, focusIndex]);

  // A press outside closes the menu without taking focus back (the press put it where it was meant to go).
  useEffect(() => {
    if (!open) return;
    const onDown = (event: PointerEvent) => {
      const target = event.target as Node;
      if (menu.current?.contains(target) || trigger.current?.contains(target)) return;
      setOpenState(false);
      onOpenChange?.(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open, onOpenChange]);

  function onTriggerKeyDown(event: KeyboardEvent) {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      openAt(0);
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      openAt(items.length - 1);
    }
  }

  function onMenuKeyDown(event: KeyboardEvent) {
    const last = items.length - 1;
    const moves: Record<string, number> = {
      ArrowDown: focusIndex === last ? 0 : focusIndex + 1,
      ArrowUp: focusIndex === 0 ? last : focusIndex - 1,
      Home: 0,
      End: last,
    };
    if (event.key in moves) {
      event.preventDefault();
      setFocusIndex(moves[event.key]);
    } else if (event.key === 'Escape' || event.key === 'Tab') {
      event.preventDefault();
      event.stopPropagation();
      close(true);
    }
  }

  return (
    <>
      <button
        ref={trigger}
        type="button"
        aria-label={label}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        className={cx(buttonClassName({ variant, size }), className)}
        // Enter and Space click a button: both open the menu on its first item, as does a pointer.
        onClick={() => (open ? close(false) : openAt(0))}
        onKeyDown={onTriggerKeyDown}
        data-testid={rest['data-testid']}
      >
        {children}
      </button>
      {open
        ? createPortal(
            <div
              ref={menu}
              id={id}
              role="menu"
              aria-label={label}
              style={style}
              onKeyDown={onMenuKeyDown}
              className={cx(
                'z-50 flex max-w-[min(34rem,calc(100vw-1rem))] min-w-56 flex-col rounded-lg border border-line bg-surface-raised p-1 shadow-lg',
                menuClassName,
              )}
            >
              {items.map((item, i) => (
                <button
                  key={item.key}
                  type="button"
                  role="menuitem"
                  tabIndex={i === focusIndex ? 0 : -1}
                  className="flex flex-col items-start gap-0.5 rounded-md px-2.5 py-1.5 text-left text-[13px] text-fg outline-none hover:bg-surface-muted focus-visible:bg-surface-muted focus-visible:ring-2 focus-visible:ring-ring"
                  onMouseEnter={() => setFocusIndex(i)}
                  onClick={() => {
                    item.onSelect();
                    close(true);
                  }}
                  data-testid={item['data-testid']}
                >
                  {item.content}
                </button>
              ))}
            </div>,
            document.body,
          )
        : null}
    </>
  );
}
