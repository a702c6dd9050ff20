import 'server-only';
import crypto from 'node:crypto';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import { listen, publish } from '@/lib/db/notifications';
import * as evalsRepo from '@/lib/db/repositories/evals';
import type { EvalScoreValue } from '@/lib/db/schema';
import type { ScorerInput } from '@/lib/schemas/evals';
import { componentLogger } from '@/lib/logger';
import { principalForUser, type Principal } from './accounts';
import { createChatCompletion } from './chat';
import { compileScorers, judgeMessages, parseJudgeVerdict, type CompiledScorer } from './eval-scorers';
import { refreshSummary, writeEvalMetrics } from './evals';

const log = componentLogger('evals');

/**
 * The eval runner (docs/architecture.md, "The eval path"; docs/evals.md): eval runs execute in the server process, through the chat service
 * (createChatCompletion: the same model resolution, backends, engine pool and usage records as /v1/chat/completions
 * and the playground), never over HTTP.
 *
 * - Claims: every server process starts one runner (lib/runtime/server-start.ts). It claims the oldest open run with a
 *   lease (repositories/evals.ts claimEvalRun, `FOR UPDATE SKIP LOCKED`), so with several processes on one PostgreSQL
 *   only one executes a run. It runs one run at a time; other processes take the others.
 * - Parallelism: CONCURRENCY samples of a run in flight at once. The built-in engine batches what it is given
 *   (continuous batching per model) and vLLM has its own queue, so a small fixed number keeps the engine busy without
 *   crowding out interactive chat requests; an answer refused as busy (429/503) is retried with back-off.
 * - Progress: every TICK_MS the lease is renewed, `progress.done` and the summary written, and an `eval_progress` event
 *   added if anything was done (so at most about one a second).
 * - Cancel: the route marks the run CANCELLED and aborts it here at once; a run held by another process sees the
 *   status at its next renewal. Finished samples stay.
 * - Recovery: a run left RUNNING by a dead server is claimed again once its lease runs out (at once on the embedded
 *   database, where this process is the only server) and resumes, skipping the samples already stored. A server that
 *   stops (SIGTERM) releases its runs' leases first (stopEvalRunner): another server takes them over at once.
 */
const CONCURRENCY = 4;
const LEASE_MS = 60_000;
const TICK_MS = 1_000;
const POLL_MS = 5_000;
const CHANNEL = evalsRepo.EVAL_RUNS_CHANNEL;
/** Attempts of one chat call refused as busy or unavailable (429, 503) before the run fails. */
const BUSY_ATTEMPTS = 6;

interface RunnerState {
  started: boolean;
  embedded: boolean;
  owner: string;
  looping: boolean;
  again: boolean;
  timer?: NodeJS.Timeout;
  active: Map<string, AbortController>;
  /** Runs being executed, for stopEvalRunner to wait on. */
  executing: Set<Promise<void>>;
}

const globalForEvals = globalThis as unknown as { __tuneboardEvalRunner?: RunnerState };
const state: RunnerState = (globalForEvals.__tuneboardEvalRunner ??= {
  started: false,
  embedded: true,
  owner: '',
  looping: false,
  again: false,
  active: new Map(),
  executing: new Set(),
});

/** Starts this process's runner (once); `embeddedDatabase`: this process is the only server (PGlite). */
export function startEvalRunner(opts: { embeddedDatabase: boolean }): void {
  if (state.started) return;
  state.started = true;
  state.embedded = opts.embeddedDatabase;
  // A fresh owner per start: on the embedded database a run held by another owner is a dead predecessor's.
  state.owner = `evals:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  if (!state.timer) {
    listen(
      CHANNEL,
      () => kick(),
      () => kick(),
    );
  }
  state.timer = setInterval(() => kick(), POLL_MS);
  state.timer.unref();
  kick();
}

/**
 * Stops the runner (a server that stops: lib/runtime/server-start.ts on SIGTERM): runs in flight are abandoned where
 * they are, RUNNING, with their samples so far stored, and their leases released, so that another server's runner
 * takes them over at once (woken), or this one's next start, rather than a minute later when the lease would have run
 * out. Resolves once they have let go.
 */
export async function stopEvalRunner(): Promise<void> {
  if (!state.started) return;
  state.started = false;
  clearInterval(state.timer);
  state.timer = undefined;
  const runIds = [...state.active.keys()];
  const started = performance.now();
  for (const controller of state.active.values()) controller.abort('stop');
  await Promise.allSettled([...state.executing]);
  for (const runId of runIds) {
    try {
      if (await evalsRepo.releaseEvalLease(await getDb(), runId, state.owner)) {
        await wakeEvalRunner(runId);
        log.info({ runId, ms: Math.round(performance.now() - started) }, 'eval run stopped; its lease released');
      }
    } catch (err) {
      // The lease then runs out as before.
      log.warn({ err, runId }, 'could not release the lease of an eval run');
    }
  }
}

/** Tells every server process's runner that a run is waiting. */
export async function wakeEvalRunner(runId: string): Promise<void> {
  await publish(CHANNEL, runId);
}

/** Stops a run this process is executing (after the cancel route marked it CANCELLED). */
export function abortLocalRun(runId: string): void {
  state.active.get(runId)?.abort('cancel');
}

function kick(): void {
  if (!state.started) return;
  if (state.looping) {
    state.again = true;
    return;
  }
  state.looping = true;
  void (async () => {
    try {
      do {
        state.again = false;
        for (;;) {
          if (!state.started) return;
          const claimed = await evalsRepo.claimEvalRun(await getDb(), state.owner, LEASE_MS, state.embedded);
          if (!claimed) break;
          const execution = executeRun(claimed.run, claimed.resumed);
          state.executing.add(execution);
          try {
            await execution;
          } finally {
            state.executing.delete(execution);
          }
        }
      } while (state.again && state.started);
    } catch (err) {
      log.error({ err }, 'eval runner failed to claim a run');
    } finally {
      state.looping = false;
    }
  })();
}

/** A failure that ends the whole run (a target that no longer exists, a server that stays busy). */
class RunFailure extends Error {}

interface WorkItem {
  example: evalsRepo.EvalExampleRow;
  targetIdx: number;
  sample: number;
}

async function loadExamples(setId: string): Promise<evalsRepo.EvalExampleRow[]> {
  const db = await getDb();
  const out: evalsRepo.EvalExampleRow[] = [];
  for (;;) {
    const page = await evalsRepo.pageExamples(db, setId, out.length ? out[out.length - 1].idx : -1, 1000);
    out.push(...page);
    if (page.length < 1000) return out;
  }
}

async function executeRun(run: evalsRepo.EvalRunRow, resumed: boolean): Promise<void> {
  const db = await getDb();
  const controller = new AbortController();
  state.active.set(run.id, controller);
  let ticker: NodeJS.Timeout | undefined;
  try {
    const principal = run.createdBy ? await principalForUser(run.createdBy) : undefined;
    if (!principal) throw new RunFailure('the user who started this run no longer exists');
    const scorers = compileScorers(
      (run.scorers as ScorerInput[]).filter((s) => (s.type as string) !== 'client'),
      ['scorers'],
    );
    const examples = await loadExamples(run.evalSetId);
    const done = new Set(
      (await evalsRepo.generatedSamples(db, run.id)).map((r) => `${r.exampleIdx}:${r.targetIdx}:${r.sample}`),
    );
    if (!(await evalsRepo.hasEvalEvent(db, run.id, 'eval_started')))
      await evalsRepo.insertEvalEvent(db, run.id, 'eval_started', 'Started', { total: run.progressTotal });
    else if (resumed) log.info({ runId: run.id, done: done.size }, 'resuming an eval run left by another server');
    const work: WorkItem[] = [];
    for (const example of examples)
      for (let targetIdx = 0; targetIdx < run.targets.length; targetIdx++)
        for (let sample = 0; sample < run.n; sample++)
          if (!done.has(`${example.idx}:${targetIdx}:${sample}`)) work.push({ example, targetIdx, sample });

    let doneCount = done.size;
    let reported = resumed ? -1 : doneCount;
    let flushing: Promise<void> | undefined;
    const flush = async () => {
      const status = await evalsRepo.renewEvalLease(db, run.id, state.owner, LEASE_MS, doneCount);
      if (status !== 'RUNNING') {
        // Cancelled (or taken over after this process stalled past its lease): stop, keep what is stored.
        controller.abort(status === undefined ? 'lost' : 'cancel');
        return;
      }
      if (doneCount !== reported) {
        reported = doneCount;
        await evalsRepo.insertEvalEvent(db, run.id, 'eval_progress', `${doneCount}/${run.progressTotal}`, {
          done: doneCount,
          total: run.progressTotal,
        });
        await refreshSummary(run.id);
      }
    };
    ticker = setInterval(() => {
      if (flushing) return;
      flushing = flush()
        .catch((err) => log.warn({ err, runId: run.id }, 'eval run progress not recorded'))
        .finally(() => (flushing = undefined));
    }, TICK_MS);

    let next = 0;
    const worker = async () => {
      while (!controller.signal.aborted && next < work.length) {
        const item = work[next++];
        // A signal per sample, aborted with the run's: the engine leaves listeners on the signals it is given, and
        // thousands of samples on the run's one signal would pile them up for the run's whole life.
        const sample = new AbortController();
        const abort = () => sample.abort(controller.signal.reason);
        controller.signal.addEventListener('abort', abort, { once: true });
        try {
          await runSample(run, principal, scorers, item, sample.signal);
        } finally {
          controller.signal.removeEventListener('abort', abort);
        }
        if (!controller.signal.aborted) doneCount++;
      }
    };
    const workers = Array.from({ length: Math.min(CONCURRENCY, work.length) }, () =>
      worker().catch((err) => {
        if (!controller.signal.aborted) controller.abort(err instanceof RunFailure ? err : 'failed');
        throw err;
      }),
    );
    const settled = await Promise.allSettled(workers);
    clearInterval(ticker);
    ticker = undefined;
    await flushing;
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
    if (reason === 'stop' || reason === 'lost') return;
    if (reason === 'cancel') {
      await refreshSummary(run.id);
      return;
    }
    const failure = settled.find((s) => s.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;

    const finished = await refreshSummary(run.id);
    await db.transaction(async (tx) => {
      const row = await evalsRepo.updateEvalRun(
        tx,
        run.id,
        {
          status: 'COMPLETED',
          progressDone: doneCount,
          finishedAt: new Date(),
          leaseOwner: null,
          leaseExpiresAt: null,
        },
        { status: ['RUNNING'], leaseOwner: state.owner },
      );
      if (!row) return;
      await evalsRepo.insertEvalEvent(tx, run.id, 'eval_completed', 'Completed', {
        done: doneCount,
        total: run.progressTotal,
        summary: finished?.summary ?? [],
      });
      // In the transaction that completes the run: a client that sees COMPLETED finds the scores in the model's
      // history (written after it, they were missing there for a moment on PostgreSQL).
      if (finished) await writeEvalMetrics({ ...finished, status: 'COMPLETED' }, tx);
    });
  } catch (err) {
    const message =
      err instanceof RunFailure || err instanceof ApiError ? err.message : 'internal error while running the eval';
    if (!(err instanceof RunFailure)) log.error({ err, runId: run.id }, 'eval run failed');
    await db
      .transaction(async (tx) => {
        const row = await evalsRepo.updateEvalRun(
          tx,
          run.id,
          { status: 'FAILED', error: message, finishedAt: new Date(), leaseOwner: null, leaseExpiresAt: null },
          { status: ['RUNNING'], leaseOwner: state.owner },
        );
        if (row) await evalsRepo.insertEvalEvent(tx, run.id, 'eval_failed', message, { error: message });
      })
      .catch((e) => log.error({ err: e, runId: run.id }, 'could not record the failure of an eval run'));
    await refreshSummary(run.id).catch(() => undefined);
  } finally {
    clearInterval(ticker);
    state.active.delete(run.id);
  }
}

/** What a chat call gave: the answer, or a refusal of this one request (a prompt too long, a bad setting). */
type ChatOutcome = { text: string; finishReason: string | null } | { error: string };

/**
 * One chat completion through the chat service. A 4xx other than 404/429 is this request's problem (the prompt is
 * longer than the context, say): it is returned, and the sample is scored 0 with it. A model that does not exist
 * (any more) fails the run; a busy or unavailable server (429, 503) is retried with back-off, then fails the run.
 */
async function chat(
  principal: Principal,
  model: string,
  messages: Record<string, unknown>[],
  sampling: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ChatOutcome> {
  const body = { ...sampling, model, messages, n: 1, stream: false };
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let message: string;
    try {
      const result = await createChatCompletion({ principal, body, headers: new Headers(), signal });
      if (result.kind !== 'json') {
        await result.body.cancel();
        throw new RunFailure(`the model '${model}' answered with a stream`);
      }
      const parsed = JSON.parse(result.body) as {
        choices?: { message?: { content?: string | null }; finish_reason?: string | null }[];
        error?: { message?: string };
        message?: string;
      };
      status = result.status ?? 200;
      if (status < 400) {
        const choice = parsed.choices?.[0];
        return { text: choice?.message?.content ?? '', finishReason: choice?.finish_reason ?? null };
      }
      message = parsed.error?.message ?? parsed.message ?? `status ${status}`;
    } catch (err) {
      if (signal.aborted) throw err;
      if (!(err instanceof ApiError)) throw err;
      status = err.status;
      message = err.message;
    }
    if (status === 404) throw new RunFailure(`the model '${model}' does not exist (any more)`);
    if (status === 429 || status >= 500) {
      if (attempt >= BUSY_ATTEMPTS) throw new RunFailure(`the model '${model}' stayed unavailable: ${message}`);
      await sleep(500 * 2 ** (attempt - 1), signal);
      continue;
    }
    return { error: message };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

/** Generates one sample, scores it with every scorer (judges are chat calls too) and stores it. */
async function runSample(
  run: evalsRepo.EvalRunRow,
  principal: Principal,
  scorers: CompiledScorer[],
  item: WorkItem,
  signal: AbortSignal,
): Promise<void> {
  const target = run.targets[item.targetIdx];
  const seed = typeof run.sampling.seed === 'number' ? run.sampling.seed + item.sample : undefined;
  const messages = item.example.messages;
  const reference: unknown = item.example.reference === null ? undefined : JSON.parse(item.example.reference);
  let answer: ChatOutcome;
  try {
    answer = await chat(
      principal,
      target.name,
      messages,
      { ...run.sampling, ...(seed === undefined ? {} : { seed }) },
      signal,
    );
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  if (signal.aborted) return;
  const scores: Record<string, EvalScoreValue> = {};
  if ('error' in answer) {
    for (const s of scorers) scores[s.name] = { score: 0, passed: false, error: `no answer: ${answer.error}` };
  } else {
    for (const s of scorers) {
      if (s.score) scores[s.name] = s.score(answer.text, reference);
      else if (s.judge) {
        const prompt = judgeMessages(
          s.judge.rubric,
          messages as { role: string; content: string }[],
          reference,
          answer.text,
        );
        let verdict: ChatOutcome;
        try {
          verdict = await chat(principal, s.judge.model, prompt, s.judge.sampling, signal);
        } catch (err) {
          if (signal.aborted) return;
          throw err;
        }
        scores[s.name] =
          'error' in verdict
            ? {
                score: 0,
                passed: false,
                judge_prompt: prompt,
                verdict: '',
                error: `the judge did not answer: ${verdict.error}`,
              }
            : { ...parseJudgeVerdict(verdict.text), judge_prompt: prompt };
      }
    }
  }
  if (signal.aborted) return;
  await evalsRepo.insertEvalResult(await getDb(), {
    runId: run.id,
    exampleIdx: item.example.idx,
    targetIdx: item.targetIdx,
    sample: item.sample,
    text: 'error' in answer ? null : answer.text,
    finishReason: 'error' in answer ? null : answer.finishReason,
    error: 'error' in answer ? answer.error : null,
    scores,
  });
}
