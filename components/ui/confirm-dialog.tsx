'use client';

import { useId, type ReactNode } from 'react';
import { Alert } from './alert';
import { Button } from './button';
import { useModalDialog } from './use-modal-dialog';

interface ConfirmDialogProps {
  open: boolean;
  title: ReactNode;
  description: ReactNode;
  confirmLabel: string;
  /** The dismiss button's words: "Cancel" unless that would clash with the action (cancelling a job). */
  dismissLabel?: string;
  tone?: 'danger' | 'primary';
  pending?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
  /** Extra content under the description, e.g. a type-the-name field for destructive actions. */
  children?: ReactNode;
  /** Keeps the confirm button disabled until the extra content is satisfied. */
  confirmDisabled?: boolean;
}

/**
 * A modal on the native <dialog>: the browser traps focus, closes it on Escape, makes the rest of the
 * page inert, and returns focus to the opener. Cancel comes first so that it takes the initial focus.
 */
export function ConfirmDialog({
  open,
  title,
  description,
  confirmLabel,
  dismissLabel = 'Cancel',
  tone = 'danger',
  pending = false,
  error,
  onConfirm,
  onCancel,
  children,
  confirmDisabled = false,
}: ConfirmDialogProps) {
  const ref = useModalDialog(open);
  const id = useId();

  return (
    <dialog
      ref={ref}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-description`}
      onCancel={(event) => {
        event.preventDefault();
        if (!pending) onCancel();
      }}
      onClick={(event) => {
        // A click on the backdrop lands on the dialog element itself.
        if (event.target === event.currentTarget && !pending) onCancel();
      }}
      className="m-auto w-[calc(100%-2rem)] max-w-md rounded-xl border border-line bg-surface-raised p-0 text-fg shadow-2xl backdrop:bg-black/50 backdrop:backdrop-blur-[1px]"
    >
      <div className="p-5">
        <h2 id={`${id}-title`} className="text-base font-semibold">
          {title}
        </h2>
        <div id={`${id}-description`} className="mt-2 text-sm text-fg-muted">
          {description}
        </div>
        {children ? <div className="mt-4">{children}</div> : null}
        {error ? (
          <Alert tone="danger" role="alert" className="mt-4">
            {error}
          </Alert>
        ) : null}
      </div>
      <div className="flex justify-end gap-2 border-t border-line bg-surface-muted/60 px-5 py-3">
        <Button variant="secondary" onClick={onCancel} disabled={pending}>
          {dismissLabel}
        </Button>
        <Button
          variant={tone === 'danger' ? 'danger' : 'primary'}
          onClick={onConfirm}
          pending={pending}
          disabled={confirmDisabled}
        >
          {confirmLabel}
        </Button>
      </div>
    </dialog>
  );
}
