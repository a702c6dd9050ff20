import type { ReactNode } from 'react';
import { cx } from '@/components/ui/cx';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import type { JobOutcome } from '@/lib/client/runs/rl-guardrails';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { JobProgress } from './job-progress';
import { JobLink } from './job-link';
import { JobStatusBadge } from './job-status-badge';

/*
 * The one job table: the model page's (a model's jobs) and the Jobs page's (an entity's jobs, with their model, data,
 * settings and duration) differ only in their columns, their job type, how a job's outcome is known and their test
 * ids. The columns both show are here; the Jobs page's own are in entity-job-columns.tsx, which only that page
 * imports, so that the model page (at its first-load budget, bench:ui) does not carry their code.
 */

type NoUpdate = Extract<JobOutcome, { kind: 'no-update' }>;

export interface JobColumn<J extends TrainingJobDto> {
  /** The header, and the cell's label when a phone stacks the row into a card. */
  header: string;
  /** Right-aligned header and cell (numbers, times). */
  right?: boolean;
  cellClassName?: string;
  cell: (job: J, outcome: JobOutcome | undefined) => ReactNode;
}

export function JobsTable<J extends TrainingJobDto>({
  jobs,
  columns,
  outcomeFor,
  caption,
  testId,
  rowTestId,
}: {
  jobs: J[];
  columns: JobColumn<J>[];
  /** What a finished job did to the weights (jobOutcome): a "No update" job gets a neutral badge and no bar. */
  outcomeFor?: (job: J) => JobOutcome;
  caption: string;
  testId: string;
  rowTestId: string;
}) {
  return (
    <Table stacked data-testid={testId}>
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <Th key={column.header} className={column.right ? 'text-right' : undefined}>
              {column.header}
            </Th>
          ))}
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => {
          const outcome = outcomeFor?.(job);
          return (
            <Tr key={job.id} data-testid={rowTestId} className="transition-colors hover:bg-surface-muted/50">
              {columns.map((column) => (
                <Td
                  key={column.header}
                  label={column.header}
                  className={cx(column.right && 'text-right', column.cellClassName) || undefined}
                >
                  {column.cell(job, outcome)}
                </Td>
              ))}
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}

export const jobColumn = <J extends TrainingJobDto>(hrefFor: (job: J) => string): JobColumn<J> => ({
  header: 'Job',
  cell: (job) => <JobLink job={job} href={hrefFor(job)} />,
});

/**
 * The status badge, a "No update" job's reason under it (`noUpdate`: what the table knows of it, under `testId`)
 * and whatever else a table says there (`extra`).
 */
export const statusColumn = <J extends TrainingJobDto>({
  noUpdate,
  testId,
  extra,
}: {
  noUpdate: (outcome: NoUpdate) => string;
  testId: string;
  extra?: (job: J) => ReactNode;
}): JobColumn<J> => ({
  header: 'Status',
  cell: (job, outcome) => (
    <>
      <JobStatusBadge status={job.status} outcome={outcome} cancelled={job.cancelled} />
      {outcome?.kind === 'no-update' ? (
        <div className="mt-1 max-w-56 text-xs text-fg-muted" data-testid={testId}>
          {noUpdate(outcome)}
        </div>
      ) : null}
      {extra?.(job)}
    </>
  ),
});

export const progressColumn = <J extends TrainingJobDto>(): JobColumn<J> => ({
  header: 'Progress',
  cell: (job, outcome) => <JobProgress job={job} outcome={outcome} compact />,
});

export const createdColumn = <J extends TrainingJobDto>(): JobColumn<J> => ({
  header: 'Created',
  right: true,
  cellClassName: 'whitespace-nowrap text-fg-muted',
  cell: (job) => <RelativeTime iso={job.created_at} />,
});

/** The model page's columns: its jobs, each with the steps it trained from and to. */
export function modelJobColumns(hrefFor: (job: TrainingJobDto) => string): JobColumn<TrainingJobDto>[] {
  return [
    jobColumn(hrefFor),
    // The model page knows a "No update" job's group counts (its checkpoint's metrics): the reason names them.
    statusColumn({ noUpdate: (outcome) => outcome.label.replace(/^No update: /, ''), testId: 'job-no-update' }),
    progressColumn(),
    {
      header: 'Steps',
      right: true,
      cellClassName: 'whitespace-nowrap text-fg-muted tabular-nums',
      cell: (job) => (
        <>
          {job.base_step ?? '—'} → {job.step ?? '…'}
        </>
      ),
    },
    createdColumn(),
  ];
}
