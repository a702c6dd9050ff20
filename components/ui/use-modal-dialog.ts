'use client';

import { useEffect, useRef } from 'react';

/**
 * Drives a native <dialog> from an `open` prop with showModal()/close(): the browser then traps focus, closes
 * on Escape, makes the page inert and gives focus back to the opener. Attach the returned ref to the dialog.
 */
export function useModalDialog(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return ref;
}
