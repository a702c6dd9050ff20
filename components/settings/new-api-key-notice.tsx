'use client';

import { useEffect, useRef } from 'react';
import { Button } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { AlertTriangleIcon, CheckIcon } from '@/components/ui/icons';

interface NewApiKeyNoticeProps {
  name: string;
  secret: string;
  onDismiss: () => void;
}

/** The one moment the secret exists in the UI: only its hash is stored, so it cannot be shown again. */
export function NewApiKeyNotice({ name, secret, onDismiss }: NewApiKeyNoticeProps) {
  const inputRef = useRef<HTMLInputElement>(null);

  // Focus lands on the key, selected, so it can be copied at once and a screen reader reads it out.
  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, [secret]);

  return (
    <div
      data-testid="new-api-key"
      className="rounded-xl border border-line-strong bg-surface-muted/60 p-4 sm:p-5"
      role="region"
      aria-label="New API key"
    >
      <div className="flex items-center gap-2 text-sm font-semibold text-fg">
        <span className="flex size-5 items-center justify-center rounded-full bg-success-soft text-success-text">
          <CheckIcon className="size-3.5" />
        </span>
        API key “{name}” created
      </div>
      <p className="mt-2 flex items-start gap-2 text-sm text-warning-text">
        <AlertTriangleIcon className="mt-0.5 size-4 shrink-0" />
        <span>
          Copy this key now and keep it somewhere safe. You won’t be able to see it again: Tuneboard stores only a hash.
        </span>
      </p>
      <div className="mt-3 flex flex-col gap-2 sm:flex-row">
        <label htmlFor="new-api-key-value" className="sr-only">
          Your new API key
        </label>
        <input
          ref={inputRef}
          id="new-api-key-value"
          readOnly
          value={secret}
          spellCheck={false}
          onFocus={(event) => event.currentTarget.select()}
          data-testid="new-api-key-value"
          className="h-9 min-w-0 flex-1 rounded-lg border border-line-strong bg-surface px-3 font-mono text-[13px] text-fg shadow-xs focus:border-accent focus:ring-3 focus:ring-accent/20 focus:outline-none"
        />
        <CopyButton value={secret} label="Copy key" size="md" data-testid="copy-new-api-key" />
      </div>
      <div className="mt-4">
        <Button variant="secondary" size="sm" onClick={onDismiss} data-testid="dismiss-new-api-key">
          I’ve saved it
        </Button>
      </div>
    </div>
  );
}
