import { cx } from '@/components/ui/cx';
import { progressFraction } from '@/lib/client/runs/poll-backoff';
import type { JobOutcome } from '@/lib/client/runs/rl-guardrails';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';

/**
 * completed_steps of num_sequences; a bar only once the total is known (the job has started). A job whose
 * `outcome` (jobOutcome) is "No update" gets no bar: a full green one would read as success for a job that took
 * no step. A cancelled job's bar is neutral, like its "Cancelled" badge: only a failure is red.
 */
export function JobProgress({
  job,
  outcome,
  compact = false,
}: {
  job: TrainingJobDto;
  outcome?: JobOutcome;
  compact?: boolean;
}) {
  if (outcome?.kind === 'no-update')
    return <p className={cx('text-fg-muted', compact ? 'text-xs' : 'text-sm')}>No gradient steps</p>;
  const fraction = progressFraction(job.completed_steps, job.num_sequences);
  const label =
    job.num_sequences === null
      ? job.status === 'QUEUED'
        ? 'Waiting to start'
        : `${job.completed_steps} steps`
      : `${job.completed_steps.toLocaleString('en')} / ${job.num_sequences.toLocaleString('en')} steps`;
  const done = job.status === 'COMPLETED';
  return (
    // Compact (a table cell): bar and label on one line where the column has room (at least 2.5rem of bar, the old
    // fixed 9rem in all); in a narrower column the label wraps under the bar instead of holding the table wider than
    // its card. A minimum width, not a flex basis: only the former counts in the cell's widest-content width.
    <div className={cx('flex items-center gap-2', compact ? 'flex-wrap gap-y-1' : 'w-full')}>
      <div
        role="progressbar"
        aria-label="Training progress"
        aria-valuemin={0}
        aria-valuemax={job.num_sequences ?? undefined}
        aria-valuenow={job.num_sequences === null ? undefined : job.completed_steps}
        aria-valuetext={label}
        className={cx(
          'relative flex-1 overflow-hidden rounded-full bg-surface-muted ring-1 ring-line ring-inset',
          compact ? 'h-1.5 min-w-10' : 'h-2',
        )}
      >
        <div
          className={cx(
            'h-full rounded-full transition-[width] duration-500',
            job.status === 'FAILED'
              ? job.cancelled
                ? 'bg-fg-subtle'
                : 'bg-danger'
              : done
                ? 'bg-success-text'
                : 'bg-accent',
          )}
          style={{ width: `${Math.round((done && fraction === null ? 1 : (fraction ?? 0)) * 100)}%` }}
        />
      </div>
      <span className={cx('shrink-0 text-xs text-fg-muted tabular-nums', compact && 'w-24 text-right')}>{label}</span>
    </div>
  );
}
