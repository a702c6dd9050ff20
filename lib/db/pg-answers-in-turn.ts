import type pg from 'pg';
import { inTurn } from '@/lib/event-loop/turns';

/**
 * A PostgreSQL client whose answers are taken up through the request thread's work budget (lib/event-loop/turns.ts),
 * as the embedded database's answers are (pglite-connection.ts).
 *
 * Node reads every socket that is ready in one go: the pool's connections' answers, each of which resumes a
 * handler (rows mapped, an answer serialised and written). Taken all at once they held a health probe behind
 * them: bench:gateway's health under load on PostgreSQL read p99 74–79 ms, with p50 at 13 ms.
 *
 * The socket's events are re-emitted through the budget, the connection's own in the order they came: its data,
 * and its end, close and error after that data, since node-postgres ends a client on `close` and an answer must
 * not be overtaken by it.
 */
const DEFERRED = new Set<string | symbol>(['data', 'end', 'close', 'error']);
const PATCHED = Symbol('tuneboard.answersInTurn');

type Emitter = { emit: (event: string | symbol, ...args: unknown[]) => boolean; [PATCHED]?: true };

function answersInTurn(stream: Emitter): void {
  if (stream[PATCHED]) return;
  stream[PATCHED] = true;
  const emit = stream.emit;
  stream.emit = function (this: Emitter, event, ...args) {
    if (!DEFERRED.has(event)) return emit.call(this, event, ...args);
    inTurn(() => void emit.call(this, event, ...args));
    // What emit would report for these events: node-postgres listens for each of them.
    return true;
  };
}

interface ConnectionLike {
  stream: Emitter;
  attachListeners: (stream: Emitter) => void;
}

export function withAnswersInTurn(Base: typeof pg.Client): typeof pg.Client {
  return class AnswersInTurnClient extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super(config as pg.ClientConfig);
      const connection = (this as unknown as { connection: ConnectionLike }).connection;
      // The socket made with the connection, and the one its answers are read from (a TLS socket over it once SSL
      // is negotiated).
      answersInTurn(connection.stream);
      const attach = connection.attachListeners.bind(connection);
      connection.attachListeners = (stream) => {
        answersInTurn(stream);
        attach(stream);
      };
    }
  } as unknown as typeof pg.Client;
}
