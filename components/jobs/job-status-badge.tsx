import { Badge, type BadgeTone } from '@/components/ui/badge';
import { Spinner } from '@/components/ui/spinner';
import type { JobOutcome } from '@/lib/client/runs/rl-guardrails';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';

const TONES: Record<TrainingJobDto['status'], BadgeTone> = {
  QUEUED: 'neutral',
  RUNNING: 'info',
  COMPLETED: 'success',
  FAILED: 'danger',
};

const LABELS: Record<TrainingJobDto['status'], string> = {
  QUEUED: 'Queued',
  RUNNING: 'Running',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
};

/**
 * `outcome` (from jobOutcome) turns a completed job that changed nothing into a neutral "No update", not a green
 * success; `cancelled` (the job's extension field) turns a user's cancel into a neutral "Cancelled", not a red
 * failure: nothing went wrong.
 */
export function JobStatusBadge({
  status,
  outcome,
  cancelled = false,
}: {
  status: TrainingJobDto['status'];
  outcome?: JobOutcome;
  cancelled?: boolean;
}) {
  if (cancelled && status === 'FAILED') {
    return (
      <Badge tone="neutral">
        <span data-testid="job-status">Cancelled</span>
      </Badge>
    );
  }
  if (outcome?.kind === 'no-update') {
    return (
      <Badge tone="neutral">
        <span data-testid="job-status" title={outcome.label}>
          No update
        </span>
      </Badge>
    );
  }
  return (
    <Badge tone={TONES[status]}>
      {status === 'RUNNING' ? <Spinner className="size-3" /> : null}
      <span data-testid="job-status">{LABELS[status]}</span>
    </Badge>
  );
}

export function jobKindLabel(type: TrainingJobDto['type']): string {
  return type === 'rl' ? 'RL' : 'SFT';
}
