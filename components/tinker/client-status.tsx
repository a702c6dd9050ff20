'use client';

import { useState } from 'react';
import { Badge } from '@/components/ui/badge';
import { BreakableText } from '@/components/ui/breakable-text';
import { cx } from '@/components/ui/cx';
import { Spinner } from '@/components/ui/spinner';
import { clientStatusView } from '@/lib/client/tinker/tinker-clients';
import { errorCategoryLabel } from '@/lib/client/tinker/tinker-format';
import type { TinkerTrainingClientDto } from '@/lib/schemas/tinker-clients';

/**
 * An error as the SDK's RequestFailedError carries it: a category that says whom it blames (user: the request was
 * wrong; server: the server or a worker lost it) and the message, which names ids, paths and settings
 * (`tinker://…/weights/…`, TUNEBOARD_JOB_LEASE_SECONDS) a narrow column must be able to wrap.
 */
export function TinkerError({
  message,
  category,
  className,
  clamp = false,
  testId = 'tinker-error',
}: {
  message: string;
  category: string | null;
  className?: string;
  /** Three lines at most until asked for the rest (a table cell); the whole text stays in the page for readers. */
  clamp?: boolean;
  testId?: string;
}) {
  const [open, setOpen] = useState(false);
  const long = clamp && message.length > CLAMP_CHARS;
  return (
    <div className={cx('text-xs text-fg', className)}>
      <p className={cx(long && !open && 'line-clamp-3')} data-testid={testId}>
        <span
          className={cx('mr-1.5 font-semibold', category === 'user' ? 'text-warning-text' : 'text-danger-text')}
          data-testid="tinker-error-category"
        >
          {errorCategoryLabel(category)}:
        </span>
        <BreakableText text={message} />
      </p>
      {long ? (
        <button
          type="button"
          className="mt-0.5 font-medium text-accent-text hover:underline"
          aria-expanded={open}
          onClick={() => setOpen((v) => !v)}
          data-testid="tinker-error-toggle"
        >
          {open ? 'Show less' : 'Show the whole error'}
        </button>
      ) : null}
    </div>
  );
}

/** About three lines of a table cell's width: longer errors (a lost worker's, with how to resume) are clamped. */
const CLAMP_CHARS = 140;

/**
 * A training client's status: the badge, the worker that holds (or loads) it, why it waits or why it closed, and a
 * failure's error with its category. `compact`: a table cell's width, else the model card's. `brief`: the badge and
 * worker only, where the reasons are shown elsewhere on the page (the model page's summary strip).
 */
export function TinkerClientStatus({
  client,
  compact = false,
  brief = false,
}: {
  client: TinkerTrainingClientDto;
  compact?: boolean;
  brief?: boolean;
}) {
  const view = clientStatusView(client);
  const busy = client.status === 'waiting' ? view.worker !== null : client.running_requests > 0;
  return (
    <div className={cx('space-y-1', compact && 'max-w-64 min-w-32')}>
      <div className="flex flex-wrap items-center gap-x-1.5 gap-y-1 text-xs text-fg-muted">
        <Badge tone={view.tone}>
          {busy && client.status !== 'failed' ? <Spinner className="size-3" /> : null}
          <span data-testid="tinker-client-status">{view.label}</span>
        </Badge>
        {view.worker ? (
          <span>
            on{' '}
            <span className="font-mono text-fg" data-testid="tinker-client-worker">
              <BreakableText text={view.worker} />
            </span>
          </span>
        ) : null}
      </div>
      {view.note && !brief ? (
        <p className="text-xs text-fg-muted" data-testid="tinker-client-note">
          <BreakableText text={view.note} />
        </p>
      ) : null}
      {client.status === 'failed' && !brief ? (
        <TinkerError message={client.error ?? 'unknown error'} category={client.error_category} clamp={compact} />
      ) : null}
    </div>
  );
}
