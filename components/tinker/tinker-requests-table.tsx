'use client';

import { Badge, type BadgeTone } from '@/components/ui/badge';
import { cx } from '@/components/ui/cx';
import { RelativeTime } from '@/components/ui/relative-time';
import { Spinner } from '@/components/ui/spinner';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatRequestDuration, requestDurationMs } from '@/lib/client/tinker/tinker-format';
import { useNowEverySecond } from '@/lib/client/hooks/use-now';
import type { TinkerRequestSummaryDto } from '@/lib/schemas/tinker-clients';
import { TinkerError } from './client-status';

const TONES: Record<TinkerRequestSummaryDto['status'], BadgeTone> = {
  queued: 'neutral',
  running: 'info',
  done: 'success',
  failed: 'danger',
};

const LABELS: Record<TinkerRequestSummaryDto['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

/** A running request's cell follows the clock on its own, so the second hand re-renders one cell, not the table. */
function DurationCell({ request }: { request: TinkerRequestSummaryDto }) {
  const running = request.status === 'running';
  const now = useNowEverySecond(running);
  const ms = requestDurationMs(request, now);
  return <>{ms === null ? '—' : `${formatRequestDuration(ms)}${running ? ' so far' : ''}`}</>;
}

/**
 * A training client's requests (futures, docs/tinker.md §2.2), in the order sortRequests gives: open ones on top.
 * A failed row is tinted and carries its error with its category, so a failure is found at a glance.
 */
export function TinkerRequestsTable({ requests }: { requests: TinkerRequestSummaryDto[] }) {
  return (
    <Table stacked data-testid="tinker-requests-table">
      <caption className="sr-only">Recent requests of this training client, open ones first</caption>
      <thead>
        <tr>
          <Th>Request</Th>
          <Th className="text-right">seq_id</Th>
          <Th>Status</Th>
          <Th className="text-right">Duration</Th>
          <Th className="text-right">Sent</Th>
          <Th>Error</Th>
        </tr>
      </thead>
      <tbody>
        {requests.map((r) => (
          <Tr
            key={r.id}
            data-testid="tinker-request-row"
            data-status={r.status}
            className={cx(r.status === 'failed' && 'bg-danger-soft/40 shadow-[inset_3px_0_0_var(--color-danger)]')}
          >
            <Td label="Request" className="font-mono text-xs text-fg">
              <span title={r.id}>{r.kind}</span>
            </Td>
            <Td label="seq_id" className="text-right text-fg-muted tabular-nums">
              {r.seq_id ?? '—'}
            </Td>
            <Td label="Status">
              <Badge tone={TONES[r.status]}>
                {r.status === 'running' ? <Spinner className="size-3" /> : null}
                <span data-testid="tinker-request-status">{LABELS[r.status]}</span>
              </Badge>
            </Td>
            <Td label="Duration" className="text-right whitespace-nowrap text-fg-muted tabular-nums">
              <DurationCell request={r} />
            </Td>
            <Td label="Sent" className="text-right whitespace-nowrap text-fg-muted">
              <RelativeTime iso={r.created_at} />
            </Td>
            {/* On a phone a row without an error leaves the line out: ten cards of "Error —" only lengthen the list. */}
            <Td label="Error" className={cx('min-w-48', !r.error && 'max-sm:hidden!')}>
              {r.error ? (
                <TinkerError message={r.error} category={r.error_category} clamp testId="tinker-request-error" />
              ) : (
                <span className="text-fg-subtle">—</span>
              )}
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
