import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import pino from 'pino';
import { loadConfig } from '@/lib/config';

/**
 * The one logger: levelled JSON lines on stdout (pino), so a log shipper can parse them and
 * `TUNEBOARD_LOG_LEVEL` can quiet them. Code outside this folder never calls console.* (a lint rule).
 *
 * Every line written while an API request is handled carries that request's id (`requestId`, also sent
 * back as the `x-request-id` header): lib/api/route.ts runs each handler inside `withRequestContext`, and
 * async work started there (streams, usage writes) inherits it through AsyncLocalStorage.
 */

const requestContext = new AsyncLocalStorage<{ requestId: string }>();

function configuredLevel(): string {
  try {
    return loadConfig().logLevel;
  } catch {
    // A bad configuration is reported at start-up (assertValidConfig); logging must still work to report it.
    return 'info';
  }
}

export const logger = pino({
  level: configuredLevel(),
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  mixin: () => {
    const ctx = requestContext.getStore();
    return ctx ? { requestId: ctx.requestId } : {};
  },
});

export type Logger = pino.Logger;

/** A logger whose lines name their component (`{"component":"jobs",…}`). */
export function componentLogger(component: string): Logger {
  return logger.child({ component });
}

export function withRequestContext<T>(requestId: string, fn: () => T): T {
  return requestContext.run({ requestId }, fn);
}

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/**
 * From now on, what anything in the process prints with console.* (Next.js's own error reports above all:
 * `⨯ TypeError: …` and its stack lines) is written as log lines of the `next` component instead, one JSON object
 * per line on stdout like every other, with an error's stack inside it. A production server calls this at
 * start-up (lib/runtime/server-start.ts); what Next printed before that (its start-up banner) stays as it was.
 */
export function routeConsoleToLogger(): void {
  const next = componentLogger('next');
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const err = args.find((a): a is Error => a instanceof Error);
      const rest = err ? args.filter((a) => a !== err) : args;
      const msg = rest.length > 0 ? format(...rest) : (err?.message ?? '');
      if (err) next[level]({ err }, msg);
      else next[level](msg);
    };
  console.log = write('info');
  console.info = write('info');
  console.debug = write('debug');
  console.warn = write('warn');
  console.error = write('error');
  console.trace = write('debug');
}
