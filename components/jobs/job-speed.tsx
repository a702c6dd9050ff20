import { formatDuration } from '@/lib/client/format/format-time';
import { useNowEverySecond } from '@/lib/client/hooks/use-now';
import type { EntityJobDto, JobEventDto, TrainingJobDto } from '@/lib/schemas/training-jobs';

/**
 * A job's speed, from the fields workers put on its events (docs/contract.md §3.5): `load_seconds` (and, from the
 * Hugging Face worker, `base_model_cached`) on training_started, `step_seconds` and `tokens_per_second` on each
 * gradient_step. Only the job page and the Jobs page import this (the model page's script budget is spent).
 */

/** "0.42 s", "12 ms", "3.2 s", "2 min 5 s": a step or a start-up, which is often well under a second. */
export function formatSeconds(seconds: number): string {
  if (seconds < 1) return seconds < 0.01 ? `${(seconds * 1000).toFixed(1)} ms` : `${(seconds * 1000).toFixed(0)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return formatDuration(seconds * 1000);
}

export function formatTokensPerSecond(value: number): string {
  return `${value >= 100 ? Math.round(value).toLocaleString('en') : value.toPrecision(3)} tokens/s`;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const numberField = (data: Record<string, unknown>, key: string): number | null => {
  const v = data[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The median step time and median trained tokens/s over the steps that report them; null without any. */
export function stepSpeed(events: JobEventDto[]): { stepSeconds: number; tokensPerSecond: number | null } | null {
  const seconds: number[] = [];
  const rates: number[] = [];
  for (const e of events) {
    if (e.type !== 'gradient_step') continue;
    const s = numberField(e.data, 'step_seconds');
    if (s !== null) seconds.push(s);
    const r = numberField(e.data, 'tokens_per_second');
    if (r !== null) rates.push(r);
  }
  const stepSeconds = median(seconds);
  return stepSeconds === null ? null : { stepSeconds, tokensPerSecond: median(rates) };
}

/**
 * The job page's phase line: "Loading base model… 12 s" from the claim until training_started (the worker fetches
 * the job's data and loads the model: the long quiet start of a job on a cold worker), then how long that took, and
 * the steps' median speed once there are steps.
 */
export function JobPhase({ job, events }: { job: TrainingJobDto; events: JobEventDto[] }) {
  const started = events.find((e) => e.type === 'training_started');
  const loading = job.status === 'RUNNING' && !started;
  const now = useNowEverySecond(loading);
  const speed = stepSpeed(events);
  let phase: string | null = null;
  if (loading) {
    const since = job.started_at ? Date.parse(job.started_at) : null;
    phase = `Loading base model…${since !== null && now !== null ? ` ${formatDuration(now - since)}` : ''}`;
  } else if (started) {
    const load = numberField(started.data, 'load_seconds');
    const cached = numberField(started.data, 'base_model_cached');
    if (load !== null) {
      phase = `Loaded in ${formatSeconds(load)}${cached === 1 ? ' (base model already in memory)' : ''}`;
    }
  }
  if (phase === null && speed === null) return null;
  return (
    <div className="flex flex-wrap items-baseline gap-x-6 gap-y-1 text-sm">
      {phase !== null ? (
        <p
          className={loading ? 'text-fg' : 'text-fg-muted'}
          role={loading ? 'status' : undefined}
          data-testid="job-phase"
        >
          {phase}
        </p>
      ) : null}
      {speed !== null ? (
        <p className="text-fg-muted tabular-nums" data-testid="job-speed">
          Median step {formatSeconds(speed.stepSeconds)}
          {speed.tokensPerSecond !== null ? ` · ${formatTokensPerSecond(speed.tokensPerSecond)}` : ''}
        </p>
      ) : null}
    </div>
  );
}

/** The Jobs page's speed under a job's duration: its latest step's tokens/s and time. */
export function JobSpeedLine({ job }: { job: EntityJobDto }) {
  if (!job.speed) return null;
  const { step_seconds, tokens_per_second } = job.speed;
  // Wraps between its two figures, never inside one: on one line it widened the Duration column enough to push
  // Created out of a laptop-width table.
  return (
    <div className="mt-0.5 text-xs whitespace-normal text-fg-subtle" data-testid="entity-job-speed">
      {tokens_per_second !== null ? (
        <>
          <span className="whitespace-nowrap">{formatTokensPerSecond(tokens_per_second)}</span>{' '}
        </>
      ) : null}
      <span className="whitespace-nowrap">{formatSeconds(step_seconds)}/step</span>
    </div>
  );
}
