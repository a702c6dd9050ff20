import type { WorkerProtocol } from '../protocol';
import type { JobInput, WorkerJob } from '../protocol';
import { componentLogger } from '@/lib/logger';
import { WorkerHttpError } from './http-protocol';

const log = componentLogger('worker');

export interface TrainContext {
  job: WorkerJob;
  input: JobInput;
  baseWeights: Uint8Array | null;
  /** Emits training_started; must be called exactly once, before any step. */
  started(numSequences: number): Promise<void>;
  /** Emits one gradient_step; every value must be a finite number. */
  step(data: Record<string, number>): Promise<void>;
  /** Aborted when the job is cancelled or the worker loses its lease. */
  signal: AbortSignal;
}

export interface TrainResult {
  /** The new checkpoint's weights (safetensors), written even when nothing was trainable (docs/contract.md §2.7). */
  weights: Uint8Array;
  /** Extra summary metrics for the new checkpoint, stored as train/<key>. */
  metrics?: Record<string, number>;
}

export type TrainingHandler = (ctx: TrainContext) => Promise<TrainResult>;
export type HandlerRegistry = Partial<Record<WorkerJob['kind'], TrainingHandler>>;

/** A failure whose message is safe and useful to show the user as the job's error_message. */
export class TrainingError extends Error {}

/**
 * The server no longer gives this worker the job (409: cancelled, recovered or finished), over HTTP or in process.
 */
function leaseGone(err: unknown): boolean {
  return err instanceof Error && (err as { status?: unknown }).status === 409;
}

function errorMessage(err: unknown): string {
  if (err instanceof TrainingError) return err.message;
  if (err instanceof Error && err.name === 'AbortError') return 'cancelled';
  log.error({ err }, 'training failed');
  // Unexpected errors are logged in full; the job shows a short, non-internal summary.
  return `Training failed with an internal error (${err instanceof Error ? err.name : 'unknown'}); see the server log`;
}

/**
 * Claims one job and runs it to a terminal state. Returns false when the queue had nothing for this worker.
 * Heart-beats through the whole job; a cancelled or lost lease aborts the handler.
 */
export async function runOneJob(
  protocol: WorkerProtocol,
  handlers: HandlerRegistry,
  opts: { heartbeatMs?: number; modelIds?: string[]; wait?: { seconds: number; signal?: AbortSignal } } = {},
): Promise<boolean> {
  const kinds = Object.keys(handlers) as WorkerJob['kind'][];
  const job = await protocol.claim(kinds, opts.modelIds, opts.wait);
  if (!job) return false;
  const claimedAt = performance.now();

  const abort = new AbortController();
  const beat = setInterval(
    () => {
      protocol
        .heartbeat(job.id)
        .then(({ cancelled }) => {
          if (cancelled) abort.abort(Object.assign(new Error('cancelled'), { name: 'AbortError' }));
        })
        .catch((err) => log.error({ err }, 'heartbeat failed'));
    },
    opts.heartbeatMs ?? Math.max(1000, (job.lease_seconds * 1000) / 4),
  );
  try {
    const handler = handlers[job.kind];
    if (!handler) throw new TrainingError(`No handler for ${job.kind} jobs on this worker`);
    const [input, baseWeights] = await Promise.all([protocol.input(job.id), protocol.baseWeights(job)]);
    let startedSent = false;
    // Settings the job was given but this engine does not implement: named in training_started, never dropped silently.
    const ignored = ignoredSettingsOf(job.config);
    // Speed, in the events themselves (docs/contract.md §3.5): training_started says how long the job took to get
    // going (input, weights, the model), each gradient_step its own duration and trained tokens per second.
    let lastMark = claimedAt;
    const startedData = (numSequences: number) => {
      lastMark = performance.now();
      return { num_sequences: numSequences, load_seconds: (lastMark - claimedAt) / 1000, ...ignored };
    };
    const result = await handler({
      job,
      input,
      baseWeights,
      signal: abort.signal,
      async started(numSequences) {
        startedSent = true;
        await protocol.appendEvents(job.id, [{ type: 'training_started', data: startedData(numSequences) }]);
      },
      async step(data) {
        if (abort.signal.aborted) throw abort.signal.reason;
        const now = performance.now();
        const speed = speedOf(data, (now - lastMark) / 1000);
        lastMark = now;
        await protocol.appendEvents(job.id, [{ type: 'gradient_step', data: { ...data, ...speed } }]);
      },
    });
    if (abort.signal.aborted) throw abort.signal.reason;
    if (!startedSent) await protocol.appendEvents(job.id, [{ type: 'training_started', data: startedData(0) }]);
    const artifactKey = await protocol.uploadCheckpoint(job.id, result.weights);
    await protocol.complete(job.id, { artifactKey, metrics: result.metrics });
  } catch (err) {
    if (abort.signal.aborted || leaseGone(err)) {
      // A cancelled or recovered job is already terminal on the server: nothing more to report. A cancel is the
      // user's decision, not a fault: one info line, no stack trace (issue 41). The server refusing a step with 409
      // before the next heartbeat said "cancelled" is the same story.
      log.info({ jobId: job.id }, 'job cancelled or taken away; stopped');
    } else {
      const message = errorMessage(err);
      await protocol.fail(job.id, message).catch((e) => log.error({ err: e }, 'could not report failure'));
    }
  } finally {
    clearInterval(beat);
  }
  return true;
}

/** The server refused the worker's token at a claim: no retry can fix that, the worker stops and says why. */
export class WorkerTokenRefusedError extends Error {
  constructor(readonly answer: WorkerHttpError) {
    super(
      `the server refused the worker token (${answer.status}): set TUNEBOARD_WORKER_TOKEN to the server's TUNEBOARD_WORKER_TOKEN`,
    );
    this.name = 'WorkerTokenRefusedError';
  }
}

/** How long a worker's claim may wait at the server for a job (the server caps it at 25 s). */
export const CLAIM_WAIT_SECONDS = 20;

/**
 * Polls for work until `signal` aborts. Claims are long polls (`waitSeconds`, default CLAIM_WAIT_SECONDS): the server
 * answers as soon as a job is queued, so a job starts within milliseconds, not at the next poll. A claim answered
 * null sooner than it could have waited (an older server, which answers at once) backs off as before.
 */
export async function runWorkerLoop(
  protocol: WorkerProtocol,
  handlers: HandlerRegistry,
  opts: { signal: AbortSignal; idleMs?: number; maxIdleMs?: number; modelIds?: string[]; waitSeconds?: number },
): Promise<void> {
  let idle = opts.idleMs ?? 250;
  const waitSeconds = opts.waitSeconds ?? CLAIM_WAIT_SECONDS;
  while (!opts.signal.aborted) {
    let ran = false;
    const asked = performance.now();
    try {
      ran = await runOneJob(protocol, handlers, {
        modelIds: opts.modelIds,
        ...(waitSeconds > 0 ? { wait: { seconds: waitSeconds, signal: opts.signal } } : {}),
      });
    } catch (err) {
      if (opts.signal.aborted) break;
      // A wrong token is refused on every claim: polling on would log the same error forever.
      if (
        err instanceof WorkerHttpError &&
        err.path === '/v1/workers/claim' &&
        (err.status === 401 || err.status === 403)
      )
        throw new WorkerTokenRefusedError(err);
      log.error({ err }, 'worker loop error');
    }
    if (ran) {
      idle = opts.idleMs ?? 250;
      continue;
    }
    // The server held the claim (a long poll that ran out): ask again at once.
    if (waitSeconds > 0 && performance.now() - asked >= (waitSeconds * 1000) / 2) continue;
    await new Promise((resolve) => setTimeout(resolve, idle));
    idle = Math.min(idle * 2, opts.maxIdleMs ?? 2000);
  }
}

/**
 * A step's speed: `step_seconds`, the time since the previous step (or training_started) ended, so the steps' sum is
 * the training time; `tokens_per_second`, the step's trained tokens (num_trainable_tokens) per second of it.
 */
export function speedOf(data: Record<string, number>, seconds: number): Record<string, number> {
  const tokens = data.num_trainable_tokens;
  return {
    step_seconds: seconds,
    ...(typeof tokens === 'number' && seconds > 0 ? { tokens_per_second: tokens / seconds } : {}),
  };
}

function ignoredSettingsOf(config: unknown): Record<string, number> {
  const raw = (config as { ignored_settings?: unknown } | null)?.ignored_settings;
  if (!raw || typeof raw !== 'object') return {};
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => typeof v === 'number' && Number.isFinite(v)));
}
