import 'server-only';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';

/**
 * Admission for large request bodies (past the small-body limit, up to TUNEBOARD_MAX_BODY_MB): each one
 * costs memory and parse time in proportion to its size, so only a few are handled at once per process;
 * the others get 429 with Retry-After at once instead of queueing up memory. Small requests never wait.
 */
let active = 0;

export interface LargeBodySlot {
  release(): void;
}

export function admitLargeBody(): LargeBodySlot {
  if (active >= config.maxLargeRequests) {
    throw new ApiError('rate_limited', 'Too many large requests at once: retry shortly', {
      headers: { 'retry-after': '2' },
    });
  }
  active++;
  let released = false;
  return {
    release() {
      if (!released) {
        released = true;
        active--;
      }
    },
  };
}
