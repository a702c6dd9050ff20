import type { ReactNode } from 'react';
import Link from 'next/link';
import { JobProgress } from '@/components/jobs/job-progress';
import { jobKindLabel, JobStatusBadge } from '@/components/jobs/job-status-badge';
import { BreakableText } from '@/components/ui/breakable-text';
import { cx } from '@/components/ui/cx';
import type { HistorySeries } from '@/lib/client/charts/chart-series';
import type { JobOutcome, RunVerdict } from '@/lib/client/runs/rl-guardrails';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import { formatDuration } from '@/lib/client/format/format-time';
import { remainingMs, useNowEverySecond } from '@/lib/client/hooks/use-now';
import { Badge } from '@/components/ui/badge';
import { Spinner } from '@/components/ui/spinner';
import { clientStatusView } from '@/lib/client/tinker/tinker-clients';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';
import type { TinkerTrainingClientDto } from '@/lib/schemas/tinker-clients';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';

function Tile({ label, children, testId }: { label: string; children: ReactNode; testId: string }) {
  return (
    <div className="min-w-0 rounded-lg border border-line bg-surface px-4 py-3" data-testid={testId}>
      <p className="text-xs font-medium text-fg-muted">{label}</p>
      <div className="mt-1 text-sm text-fg">{children}</div>
    </div>
  );
}

const VERDICT_TONE: Record<RunVerdict['kind'], string> = {
  improving: 'text-success-text',
  stalled: 'text-fg',
  hacked: 'text-warning-text',
  declining: 'text-danger-text',
  flat: 'text-fg',
  unknown: 'text-fg-muted',
};

function latestPoint(series: readonly HistorySeries[], name: string) {
  const s = series.find((x) => x.name === name);
  const p = s?.points.filter(([, v]) => Number.isFinite(v));
  if (!p || p.length === 0) return null;
  return { name, step: p[p.length - 1][0], value: p[p.length - 1][1], prev: p.length > 1 ? p[p.length - 2][1] : null };
}

export interface RunSummaryProps {
  verdict: RunVerdict;
  best: {
    checkpoint: CheckpointDto;
    metric: string;
    direction: 'max' | 'min';
    /** How many checkpoints share its value: all of them (≥ 2) is a tie, not a best. */
    tie: { tied: number; total: number; allTied: boolean };
  } | null;
  series: readonly HistorySeries[];
  /** The newest open job, else the newest job. */
  job: TrainingJobDto | null;
  jobOutcome: JobOutcome | undefined;
  jobHref: (job: TrainingJobDto) => string;
  /** A Tinker training client's model: the client takes the last tile's place (its steps, its state). */
  tinkerClient?: TinkerTrainingClientDto | null;
  /** Every job of the model is an SFT job: the hints speak of held-out examples, not of logged val splits. */
  sftOnly?: boolean;
}

/** The model page's first answer to "is my run working?": verdict, best checkpoint and why, latest val, the live job. */
export function RunSummaryStrip({
  verdict,
  best,
  series,
  job,
  jobOutcome,
  jobHref,
  tinkerClient = null,
  sftOnly = false,
}: RunSummaryProps) {
  const val = latestPoint(series, 'val/reward') ?? latestPoint(series, 'val/loss');
  return (
    <section aria-label="Run summary" className="grid gap-3 sm:grid-cols-2 xl:grid-cols-4" data-testid="run-summary">
      <Tile label="Run" testId="summary-verdict">
        <p className={cx('font-medium', VERDICT_TONE[verdict.kind])} data-testid="run-verdict" data-kind={verdict.kind}>
          {verdict.text}
        </p>
        {'from' in verdict ? (
          <p className="mt-0.5 text-xs text-fg-muted tabular-nums">
            {formatNumber(verdict.from)} → {formatNumber(verdict.to)} ({verdict.basis})
          </p>
        ) : null}
      </Tile>
      <Tile label="Best checkpoint" testId="summary-best">
        {best?.tie.allTied ? (
          <>
            <p className="font-medium" data-testid="summary-best-tied">
              Tied: all {best.tie.total} checkpoints
            </p>
            <p className="mt-0.5 text-xs text-fg-muted">
              Each scored <span className="tabular-nums">{formatNumber(best.checkpoint.metrics[best.metric])}</span> on{' '}
              {best.metric}: none is better.
            </p>
          </>
        ) : best ? (
          <>
            <p className="font-medium tabular-nums">
              Step {best.checkpoint.step.toLocaleString('en')}
              {best.tie.tied > 1 ? (
                <span className="font-normal text-fg-muted">
                  {' '}
                  (tied with {best.tie.tied - 1} other{best.tie.tied === 2 ? '' : 's'})
                </span>
              ) : null}
            </p>
            <p className="mt-0.5 text-xs text-fg-muted">
              {best.direction === 'max' ? 'Highest' : 'Lowest'} {best.metric}:{' '}
              <span className="tabular-nums">{formatNumber(best.checkpoint.metrics[best.metric])}</span>
            </p>
          </>
        ) : (
          <>
            <p className="font-medium text-fg-muted">None chosen</p>
            <p className="mt-0.5 text-xs text-fg-muted" data-testid="summary-best-hint">
              {sftOnly
                ? 'No validation metric yet. Train loss rewards memorising; hold examples out (Validation in the Fine-tune form) to rank checkpoints by val/loss.'
                : 'No validation metric yet. Train metrics reward memorising; log a val split to rank checkpoints.'}
            </p>
          </>
        )}
      </Tile>
      <Tile label="Latest validation" testId="summary-val">
        {val ? (
          <>
            <p className="font-medium tabular-nums">
              {val.name} {formatNumber(val.value)}
            </p>
            <p className="mt-0.5 text-xs text-fg-muted tabular-nums">
              at step {val.step.toLocaleString('en')}
              {val.prev !== null
                ? ` · ${val.value >= val.prev ? '+' : '−'}${formatNumber(Math.abs(val.value - val.prev))} since the previous`
                : ''}
            </p>
          </>
        ) : (
          <p className="text-fg-muted">
            {sftOnly ? 'No held-out examples: no val/loss' : 'No val/reward or val/loss logged'}
          </p>
        )}
      </Tile>
      {tinkerClient ? (
        <Tile label="Tinker training client" testId="summary-tinker">
          <div className="space-y-1.5">
            <TinkerStatusLine client={tinkerClient} />
            <p className="text-xs text-fg-muted tabular-nums">
              {tinkerClient.optim_steps.toLocaleString('en')} optim step{tinkerClient.optim_steps === 1 ? '' : 's'}
            </p>
          </div>
        </Tile>
      ) : (
        <Tile label="Latest job" testId="summary-job">
          {job ? (
            <div className="space-y-1.5">
              <div className="flex flex-wrap items-center gap-2">
                <Link href={jobHref(job)} className="font-medium text-fg hover:text-accent-text hover:underline">
                  {jobKindLabel(job.type)} job {job.id.slice(0, 8)}
                </Link>
                <JobStatusBadge status={job.status} outcome={jobOutcome} cancelled={job.cancelled} />
              </div>
              {jobOutcome?.kind === 'no-update' ? (
                <p className="text-xs text-fg-muted" data-testid="summary-no-update">
                  {jobOutcome.label}
                </p>
              ) : job.status === 'QUEUED' && job.waiting_reason ? (
                <p className="text-xs text-fg-muted">
                  <BreakableText text={job.waiting_reason} />
                </p>
              ) : (
                <>
                  <JobProgress job={job} />
                  {job.status === 'RUNNING' ? <TimeLeft job={job} /> : null}
                </>
              )}
            </div>
          ) : (
            <p className="text-fg-muted">No training jobs yet</p>
          )}
        </Tile>
      )}
    </section>
  );
}

/**
 * A running job's time left, from its pace so far (the job page's estimate): its own component, the only part of the
 * strip that ticks every second.
 */
function TimeLeft({ job }: { job: TrainingJobDto }) {
  const now = useNowEverySecond(true);
  const start = job.started_at ? new Date(job.started_at).getTime() : null;
  if (now === null || start === null) return null;
  const left = remainingMs(now - start, job.completed_steps, job.num_sequences);
  return (
    <p className="text-xs text-fg-muted tabular-nums" data-testid="summary-time-left">
      {left === null ? 'Estimating the time left…' : `About ${formatDuration(left)} left`}
    </p>
  );
}

/**
 * The training client's badge and worker, as on the Jobs page, without the reasons: the Tinker card under the strip
 * has them (and its code loads only on a Tinker model's page).
 */
function TinkerStatusLine({ client }: { client: TinkerTrainingClientDto }) {
  const view = clientStatusView(client);
  const busy =
    client.status === 'waiting' ? view.worker !== null : client.status === 'ready' && client.running_requests > 0;
  return (
    <div className="flex flex-wrap items-center gap-x-1.5 gap-y-1 text-xs text-fg-muted">
      <Badge tone={view.tone}>
        {busy ? <Spinner className="size-3" /> : null}
        <span data-testid="summary-tinker-status">{view.label}</span>
      </Badge>
      {view.worker ? (
        <span>
          on <span className="font-mono text-fg">{view.worker}</span>
        </span>
      ) : null}
    </div>
  );
}
