'use client';

import type { ReactNode } from 'react';
import { cx } from '@/components/ui/cx';
import { useModalDialog } from '@/components/ui/use-modal-dialog';

interface ModalProps {
  open: boolean;
  onClose: () => void;
  labelledBy: string;
  className?: string;
  children: ReactNode;
}

/**
 * The shell's overlays on the native <dialog>: the browser traps focus, closes on Escape, makes the page
 * inert and returns focus to the opener. A click on the backdrop closes too.
 */
export function Modal({ open, onClose, labelledBy, className, children }: ModalProps) {
  const ref = useModalDialog(open);
  return (
    <dialog
      ref={ref}
      aria-labelledby={labelledBy}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
      className={cx(
        'm-auto w-[calc(100%-2rem)] rounded-xl border border-line bg-surface-raised p-0 text-fg shadow-2xl backdrop:bg-black/50 backdrop:backdrop-blur-[1px]',
        className,
      )}
    >
      {open ? children : null}
    </dialog>
  );
}
