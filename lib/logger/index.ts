import { AsyncLocalStorage } from 'node:async_hooks';
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
