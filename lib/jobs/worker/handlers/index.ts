import type { HandlerRegistry } from '../runner';
import { rlHandler } from './rl';
import { sftHandler } from './sft';

/**
 * Training handlers by job kind, run inside worker processes: SFT and RL on the built-in CPU engine
 * (lib/engine/train). A kind without a handler stays queued.
 */
export function trainingHandlers(): HandlerRegistry {
  return { sft: sftHandler, rl: rlHandler };
}
