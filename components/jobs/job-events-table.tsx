import { Badge, type BadgeTone } from '@/components/ui/badge';
import { cx } from '@/components/ui/cx';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatDateTime } from '@/lib/client/format/format-time';
import { eventSummary } from '@/lib/client/charts/job-events';
import type { JobEventDto } from '@/lib/schemas/training-jobs';

const TONES: Record<JobEventDto['type'], BadgeTone> = {
  training_started: 'info',
  gradient_step: 'neutral',
  training_ended: 'success',
  training_failed: 'danger',
};

/**
 * A user's cancel is sent as `training_failed {error_message: "cancelled", cancelled: true}`, the terminal event every
 * client knows (ART's event type is a closed Literal and only a terminal type ends its polling; docs/contract.md §3.6):
 * the dashboard reads it as the neutral `training_cancelled` it is.
 */
export function isCancelEvent(event: Pick<JobEventDto, 'type' | 'data'>): boolean {
  return event.type === 'training_failed' && event.data.cancelled === true;
}

/**
 * `firstIndex` numbers the rows (chronological pages); newest-first pages have no known position.
 * Stacked: a phone cannot show a step's metrics beside its time, and sideways scrolling hid the time.
 */
export function JobEventsTable({ events, firstIndex }: { events: JobEventDto[]; firstIndex?: number }) {
  return (
    <Table stacked data-testid="job-events-table">
      <caption className="sr-only">Job events</caption>
      <thead>
        <tr>
          {firstIndex !== undefined ? <Th className="w-12 text-right">#</Th> : null}
          <Th>Type</Th>
          <Th>Data</Th>
          <Th className="text-right">Time</Th>
        </tr>
      </thead>
      <tbody>
        {events.map((event, i) => {
          const cancel = isCancelEvent(event);
          const summary = cancel ? 'cancelled by a user' : eventSummary(event);
          return (
            <Tr key={event.id} data-testid="job-event-row">
              {firstIndex !== undefined ? (
                <Td label="#" className="text-right text-fg-subtle tabular-nums">
                  {firstIndex + i}
                </Td>
              ) : null}
              <Td label="Type">
                <Badge tone={cancel ? 'neutral' : TONES[event.type]}>
                  <span data-testid="job-event-type">{cancel ? 'training_cancelled' : event.type}</span>
                </Badge>
              </Td>
              {/* An event without data (training_ended) would be a card line with a label and nothing beside it. */}
              <Td
                label="Data"
                className={cx(
                  'max-w-xl font-mono text-xs break-words whitespace-pre-wrap text-fg-muted',
                  // Important: the stacked table's own rule making every cell a grid is more specific.
                  summary === '' && 'max-sm:hidden!',
                )}
              >
                {summary}
              </Td>
              <Td label="Time" className="text-right text-xs whitespace-nowrap text-fg-muted">
                <time dateTime={event.created_at}>{formatDateTime(event.created_at, 'UTC', { seconds: true })}</time>
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
