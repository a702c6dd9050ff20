import { Badge, type BadgeTone } from '@/components/ui/badge';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatDateTime } from '@/lib/client/format-time';
import { eventSummary } from '@/lib/client/job-events';
import type { JobEventDto } from '@/lib/schemas/training-jobs';

const TONES: Record<JobEventDto['type'], BadgeTone> = {
  training_started: 'info',
  gradient_step: 'neutral',
  training_ended: 'success',
  training_failed: 'danger',
};

/** `firstIndex` numbers the rows (chronological pages); newest-first pages have no known position. */
export function JobEventsTable({ events, firstIndex }: { events: JobEventDto[]; firstIndex?: number }) {
  return (
    <Table data-testid="job-events-table">
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
        {events.map((event, i) => (
          <Tr key={event.id} data-testid="job-event-row">
            {firstIndex !== undefined ? (
              <Td className="text-right text-fg-subtle tabular-nums">{firstIndex + i}</Td>
            ) : null}
            <Td>
              <Badge tone={TONES[event.type]}>{event.type}</Badge>
            </Td>
            <Td className="max-w-xl font-mono text-xs break-words whitespace-pre-wrap text-fg-muted">
              {eventSummary(event)}
            </Td>
            <Td className="text-right text-xs whitespace-nowrap text-fg-muted">
              <time dateTime={event.created_at}>{formatDateTime(event.created_at, 'UTC')}</time>
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
