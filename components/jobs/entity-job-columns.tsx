import Link from 'next/link';
import { Fragment } from 'react';
import { BreakableText } from '@/components/ui/breakable-text';
import { formatDuration } from '@/lib/client/format/format-time';
import { useNowEverySecond } from '@/lib/client/hooks/use-now';
import { groupCountsFromConfig, jobOutcome } from '@/lib/client/runs/rl-guardrails';
import type { EntityJobDto } from '@/lib/schemas/training-jobs';
import { JobProgress } from './job-progress';
import { JobSpeedLine } from './job-speed';
import { createdColumn, jobColumn, statusColumn, type JobColumn } from './jobs-table';

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

/** The Jobs page's columns: an entity's jobs, with their model, what they trained on, their settings and duration. */
export function entityJobColumns(
  hrefFor: (job: EntityJobDto) => string,
  modelHref: (job: EntityJobDto) => string,
): JobColumn<EntityJobDto>[] {
  return [
    jobColumn(hrefFor),
    // May wrap (at a name's hyphens): a long name must not push Duration and Created out of view.
    {
      header: 'Model',
      cell: (job) => (
        <>
          <Link href={modelHref(job)} className="text-fg hover:text-accent-text hover:underline">
            {job.model.name}
          </Link>
          <div className="mt-0.5 text-xs text-fg-subtle">{job.model.project}</div>
        </>
      ),
    },
    statusColumn({
      // Without the checkpoint's group counts (they are on the model and job pages) the reason stays general.
      noUpdate: (outcome) =>
        outcome.submitted === 0 ? 'the job had no trajectory groups' : 'the weights did not change',
      testId: 'entity-job-no-update',
      // A reason names a base model (`org/name`) and may name a setting (TUNEBOARD_RUNNER_CONCURRENCY), either wider
      // than the column a laptop-width table can give it unless they wrap.
      extra: (job) =>
        job.status === 'QUEUED' && job.waiting_reason ? (
          <div className="mt-1 max-w-56 min-w-28 text-xs text-fg-muted" data-testid="entity-job-waiting">
            <BreakableText text={job.waiting_reason} />
          </div>
        ) : null,
    }),
    {
      header: 'Progress',
      // Claimed, before training_started: the worker is loading the model, not stuck at 0 steps.
      cell: (job, outcome) =>
        job.status === 'RUNNING' && job.num_sequences === null ? (
          <span className="text-xs text-fg-muted" data-testid="entity-job-loading">
            Loading base model…
          </span>
        ) : (
          <JobProgress job={job} outcome={outcome} compact />
        ),
    },
    { header: 'Data', cell: (job) => <DataCell job={job} /> },
    { header: 'Settings', cellClassName: 'text-xs text-fg-muted', cell: (job) => <SettingsCell job={job} /> },
    {
      header: 'Duration',
      right: true,
      cellClassName: 'whitespace-nowrap text-fg-muted tabular-nums',
      cell: (job) => (
        <>
          <DurationCell job={job} />
          <JobSpeedLine job={job} />
        </>
      ),
    },
    createdColumn(),
  ];
}

/**
 * As on the model page: an RL job that took no gradient step is a neutral "No update", not a green "Completed". Its
 * checkpoint's group counts (the reason) are on the model and job pages; a job sent without groups says so from its
 * config.
 */
export const entityJobOutcome = (job: EntityJobDto) => jobOutcome(job, groupCountsFromConfig(job.config));
