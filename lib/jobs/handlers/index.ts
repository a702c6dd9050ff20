import type { HandlerRegistry } from '../runner';

/**
 * Training handlers by job kind, run inside worker processes. SFT and RL on the built-in engine are
 * registered here as they land (see lib/jobs/README.md); a kind without a handler stays queued.
 */
export function trainingHandlers(): HandlerRegistry {
  return {};
}
