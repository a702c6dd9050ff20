import { Badge, type BadgeTone } from '@/components/ui/badge';
import { cx } from '@/components/ui/cx';
import { Spinner } from '@/components/ui/spinner';
import { runProgress, type EvalRun, type EvalRunStatus } from '@/lib/client/evals/evals';

const TONES: Record<EvalRunStatus, BadgeTone> = {
  QUEUED: 'neutral',
  RUNNING: 'info',
  COMPLETED: 'success',
  FAILED: 'danger',
  // A person's cancel is not a failure: neutral, as a cancelled training job is.
  CANCELLED: 'neutral',
};

export function EvalStatusBadge({ status }: { status: EvalRunStatus }) {
  return (
    <Badge tone={TONES[status]}>
      {status === 'RUNNING' ? <Spinner className="size-3" /> : null}
      <span data-testid="eval-run-status">{status.charAt(0) + status.slice(1).toLowerCase()}</span>
    </Badge>
  );
}

/** done of total samples scored; a bar once the total is known. */
export function EvalProgress({
  run,
  compact = false,
}: {
  run: Pick<EvalRun, 'progress' | 'status'>;
  compact?: boolean;
}) {
  const fraction = runProgress(run);
  const p = run.progress;
  const label =
    p && p.total > 0
      ? `${p.done.toLocaleString('en')} / ${p.total.toLocaleString('en')}`
      : run.status === 'QUEUED'
        ? 'Waiting to start'
        : '—';
  return (
    <div className={cx('flex items-center gap-2', compact ? 'flex-wrap gap-y-1' : 'w-full')}>
      <div
        role="progressbar"
        aria-label="Samples scored"
        aria-valuemin={0}
        aria-valuemax={p?.total || undefined}
        aria-valuenow={p && p.total > 0 ? p.done : undefined}
        aria-valuetext={label}
        className={cx(
          'relative flex-1 overflow-hidden rounded-full bg-surface-muted ring-1 ring-line ring-inset',
          compact ? 'h-1.5 min-w-10' : 'h-2',
        )}
      >
        <div
          className={cx(
            'h-full rounded-full transition-[width] duration-500',
            run.status === 'FAILED'
              ? 'bg-danger'
              : run.status === 'CANCELLED'
                ? 'bg-fg-subtle'
                : run.status === 'COMPLETED'
                  ? 'bg-success-text'
                  : 'bg-accent',
          )}
          style={{ width: `${Math.round((fraction ?? 0) * 100)}%` }}
        />
      </div>
      <span className="shrink-0 text-xs text-fg-muted tabular-nums" data-testid="eval-run-progress">
        {label}
      </span>
    </div>
  );
}
