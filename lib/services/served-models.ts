import 'server-only';
import { MODELS_CHANNEL } from '@/lib/db/notifications';
import { NotifiedCache } from './notified-cache';

/**
 * Trained models as chat requests name them, with the checkpoint that serves each (lib/services/chat-models.ts),
 * tagged by model id: an RL rollout sends hundreds of completions for one checkpoint, and a lookup per request
 * cost about as much server CPU as relaying the answer (bench:gateway, trained model).
 */
export const servedModels = new NotifiedCache(MODELS_CHANNEL, 10_000);

/** Call once a change to these models or their checkpoints has committed (a new checkpoint, a deletion). */
export function modelsChanged(modelIds: string[]): Promise<void> {
  return servedModels.changed(modelIds);
}
