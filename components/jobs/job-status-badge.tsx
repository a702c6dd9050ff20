import { Badge, type BadgeTone } from '@/components/ui/badge';
import { Spinner } from '@/components/ui/spinner';
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

export function JobStatusBadge({ status }: { status: TrainingJobDto['status'] }) {
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
