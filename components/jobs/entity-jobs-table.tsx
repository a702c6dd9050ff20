import Link from 'next/link';
import { Fragment } from 'react';
import { BreakableText } from '@/components/ui/breakable-text';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatDuration } from '@/lib/client/format-time';
import { useNowEverySecond } from '@/lib/client/use-now';
import { groupCountsFromConfig, jobOutcome } from '@/lib/client/rl-guardrails';
import type { EntityJobDto } from '@/lib/schemas/training-jobs';
import { JobProgress } from './job-progress';
import { JobSpeedLine } from './job-speed';
import { JobLink } from './job-link';
import { JobStatusBadge } from './job-status-badge';

/** The settings a person compares between jobs, from the resolved config. */
function settingsOf(job: EntityJobDto): string[] {
  const c = job.config as Record<string, unknown>;
  const lr = Array.isArray(c.learning_rate) ? `${c.learning_rate[0]}…` : c.learning_rate;
  const parts = [
    lr !== undefined ? `lr ${lr}` : null,
    c.batch_size !== undefined ? `batch ${c.batch_size}` : null,
    c.epochs !== undefined && job.type === 'sft' ? `${c.epochs} epoch${c.epochs === 1 ? '' : 's'}` : null,
  ];
  return parts.filter((p): p is string => p !== null);
}

/** The settings on one line where the column has room; otherwise they wrap between settings, never inside one. */
function SettingsCell({ job }: { job: EntityJobDto }) {
  const parts = settingsOf(job);
  if (parts.length === 0) return <>—</>;
  // One element: a phone's stacked table makes each child of a cell a grid item, which put every " · " on a line
  // of its own.
  return (
    <span>
      {parts.map((part, i) => (
        <Fragment key={part}>
          {i > 0 ? ' · ' : null}
          <span className="whitespace-nowrap">{part}</span>
        </Fragment>
      ))}
    </span>
  );
}

const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

/**
 * What the job trained on: an SFT job's dataset (the artifact's name and version, its full URL on hover) and size,
 * an RL job's trajectory groups (sent with the job, so they have no name).
 */
function DataCell({ job }: { job: EntityJobDto }) {
  const c = job.config as Record<string, unknown>;
  if (job.type === 'sft' && typeof c.training_data_url === 'string') {
    const url = c.training_data_url;
    return (
      <>
        {/* Wraps at the name's hyphens, up to the 12rem it was cut off at before: truncated, it held the column at
            12rem however narrow the card. */}
        <div className="max-w-48 font-mono text-xs text-fg" title={url} data-testid="entity-job-dataset">
          {url.split('/').at(-1) || url}
        </div>
        {typeof c.num_examples === 'number' ? (
          <div className="mt-0.5 text-xs text-fg-subtle">{plural(c.num_examples, 'example')}</div>
        ) : null}
      </>
    );
  }
  if (job.type === 'rl' && typeof c.num_groups === 'number')
    return <span className="text-xs text-fg-muted">{plural(c.num_groups, 'trajectory group')}</span>;
  return <span className="text-xs text-fg-subtle">—</span>;
}

/**
 * How long a job ran, or has run so far. A running job's cell follows the clock on its own, so that the second
 * hand re-renders one cell and not both tables of the Jobs page.
 */
function DurationCell({ job }: { job: EntityJobDto }) {
  const running = job.started_at !== null && job.finished_at === null;
  const now = useNowEverySecond(running);
  const started = job.started_at ? Date.parse(job.started_at) : null;
  const ended = job.finished_at ? Date.parse(job.finished_at) : now;
  const duration = started === null || ended === null ? null : ended - started;
  return <>{duration === null ? '—' : formatDuration(duration)}</>;
}

export function EntityJobsTable({
  jobs,
  hrefFor,
  modelHref,
  caption,
}: {
  jobs: EntityJobDto[];
  hrefFor: (job: EntityJobDto) => string;
  modelHref: (job: EntityJobDto) => string;
  caption: string;
}) {
  return (
    <Table stacked data-testid="entity-jobs-table">
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          <Th>Job</Th>
          <Th>Model</Th>
          <Th>Status</Th>
          <Th>Progress</Th>
          <Th>Data</Th>
          <Th>Settings</Th>
          <Th className="text-right">Duration</Th>
          <Th className="text-right">Created</Th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => {
          // As on the model page: an RL job that took no gradient step is a neutral "No update", not a green
          // "Completed". Its checkpoint's group counts (the reason) are on the model and job pages; a job sent
          // without groups says so from its config.
          const outcome = jobOutcome(job, groupCountsFromConfig(job.config));
          return (
            <Tr key={job.id} data-testid="entity-job-row" className="transition-colors hover:bg-surface-muted/50">
              <Td label="Job">
                <JobLink job={job} href={hrefFor(job)} />
              </Td>
              {/* May wrap (at a name's hyphens): a long name must not push Duration and Created out of view. */}
              <Td label="Model">
                <Link href={modelHref(job)} className="text-fg hover:text-accent-text hover:underline">
                  {job.model.name}
                </Link>
                <div className="mt-0.5 text-xs text-fg-subtle">{job.model.project}</div>
              </Td>
              <Td label="Status">
                <JobStatusBadge status={job.status} outcome={outcome} cancelled={job.cancelled} />
                {outcome.kind === 'no-update' ? (
                  <div className="mt-1 max-w-56 text-xs text-fg-muted" data-testid="entity-job-no-update">
                    {outcome.submitted === 0 ? 'the job had no trajectory groups' : 'the weights did not change'}
                  </div>
                ) : null}
                {/* A reason names a base model (`org/name`) and may name a setting (TUNEBOARD_RUNNER_CONCURRENCY),
                    either wider than the column a laptop-width table can give it unless they wrap. */}
                {job.status === 'QUEUED' && job.waiting_reason ? (
                  <div className="mt-1 max-w-56 min-w-28 text-xs text-fg-muted" data-testid="entity-job-waiting">
                    <BreakableText text={job.waiting_reason} />
                  </div>
                ) : null}
              </Td>
              <Td label="Progress">
                {/* Claimed, before training_started: the worker is loading the model, not stuck at 0 steps. */}
                {job.status === 'RUNNING' && job.num_sequences === null ? (
                  <span className="text-xs text-fg-muted" data-testid="entity-job-loading">
                    Loading base model…
                  </span>
                ) : (
                  <JobProgress job={job} outcome={outcome} compact />
                )}
              </Td>
              <Td label="Data">
                <DataCell job={job} />
              </Td>
              <Td label="Settings" className="text-xs text-fg-muted">
                <SettingsCell job={job} />
              </Td>
              <Td label="Duration" className="text-right whitespace-nowrap text-fg-muted tabular-nums">
                <DurationCell job={job} />
                <JobSpeedLine job={job} />
              </Td>
              <Td label="Created" className="text-right whitespace-nowrap text-fg-muted">
                <RelativeTime iso={job.created_at} />
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
