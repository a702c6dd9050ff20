import 'server-only';
import { randomUUID } from 'node:crypto';

/** A client's own `x-request-id` (as vLLM and most proxies send) when it is a sane token; else a fresh one. */
export function requestIdFrom(given: string | null | undefined): string {
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}
