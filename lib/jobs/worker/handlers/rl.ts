import { encodeModel } from '@/lib/engine/safetensors';
import { RlDataError, trainRl, zeroAdvantageShare } from '@/lib/engine/train/rl';
import { resolvedRlConfigSchema } from '@/lib/schemas/training-jobs';
import { TrainingError, type TrainingHandler } from '../runner';
import { loadTrainingModel } from './load-model';

/**
 * RL on the built-in engine (docs/contract.md §5): one gradient_step per tokenised history. When nothing is trainable
 * the job still completes, with num_sequences 0 and a copy of the weights (docs/contract.md §2.7). The group counts go
 * into the summary metrics too, so they reach the checkpoint even without any step.
 */
export const rlHandler: TrainingHandler = async (ctx) => {
  if (ctx.input.kind !== 'rl') throw new TrainingError('RL handler received a non-RL job');
  const parsed = resolvedRlConfigSchema.safeParse(ctx.job.config);
  if (!parsed.success) throw new TrainingError('The job configuration is invalid');
  const { model, tokenizer } = await loadTrainingModel(ctx);
  try {
    const result = await trainRl(model, tokenizer, ctx.input.trajectory_groups, {
      config: parsed.data,
      signal: ctx.signal,
      onStart: (n) => ctx.started(n),
      onStep: (m) => ctx.step({ ...m }),
    });
    const metrics = {
      num_groups_submitted: result.numGroupsSubmitted,
      num_groups_trainable: result.numGroupsTrainable,
      zero_advantage_share: zeroAdvantageShare(result.numGroupsSubmitted, result.numGroupsTrainable),
      num_trajectories: result.numTrajectories,
    };
    if (result.steps.length === 0 && ctx.baseWeights) return { weights: ctx.baseWeights, metrics };
    return { weights: encodeModel(model), metrics };
  } catch (err) {
    if (err instanceof RlDataError) throw new TrainingError(err.message);
    throw err;
  } finally {
    model.release();
  }
};
