import 'server-only';
import { randomUUID } from 'node:crypto';

/** Whether an id is a sane token to send back in `x-request-id`: no header-breaking or non-Latin-1 characters. */
export function isSaneRequestId(id: string | null | undefined): id is string {
  return !!id && /^[\w.:-]{1,128}$/.test(id);
}

/** A client's own `x-request-id` (as vLLM and most proxies send) when it is a sane token; else a fresh one. */
export function requestIdFrom(given: string | null | undefined): string {
  return isSaneRequestId(given) ? given : randomUUID();
}
