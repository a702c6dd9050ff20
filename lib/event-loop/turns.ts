import { config } from '@/lib/config';
import { TurnBudget } from './turn-budget';

/**
 * Request handlers started by the API fast path and database answers taken up by the request thread, a
 * bounded amount per event-loop turn (TurnBudget), so that a burst cannot hold back what is cheap and waiting: a
 * health probe, the next token of a stream, a socket with a new request.
 *
 * Node reads every socket that is ready in one go (a PostgreSQL pool's connections among them), and the embedded
 * database thread's queued answers arrive in one go too. Each starts or resumes a handler (authentication, parsing,
 * a query to send, an answer to serialise and write), so 250 requests arriving together, or the answers that piled
 * up meanwhile, made one turn last up to 300 ms, and a liveness probe read in the next turn waited that long
 * (bench:gateway, health under load). The engine threads' tokens have their own budget (lib/inference/pool.ts).
 */
type Budget = Pick<TurnBudget<() => void>, 'push' | 'waiting'>;
// On globalThis: the fast path (installed from instrumentation) and the database client are bundled apart, and each
// bundle would get a budget of its own.
const KEY = Symbol.for('tuneboard.requestWork');

/** Made on first use rather than at import: the configuration is checked (and its errors reported) at start-up. */
function requestWork(): Budget {
  const global = globalThis as Record<symbol, Budget | undefined>;
  return (global[KEY] ??=
    config.requestWorkPerTurnMs > 0
      ? new TurnBudget<() => void>((work) => work(), config.requestWorkPerTurnMs)
      : { push: (work) => work(), waiting: 0 });
}

/** Runs `work` now if this turn has room and nothing offered earlier still waits, else in a later turn. */
export function inTurn(work: () => void): void {
  requestWork().push(work);
}

/** inTurn for work that returns a promise: settles as `work`'s promise does, once it has run. */
export function inTurnAsync<T>(work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => inTurn(() => void work().then(resolve, reject)));
}

/** How much work waits for a later turn (tests). */
export function waitingForTurn(): number {
  return requestWork().waiting;
}
