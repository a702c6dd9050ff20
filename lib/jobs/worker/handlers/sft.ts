import { encodeModel } from '@/lib/engine/safetensors';
import { SftDataError, sftBatchCount, trainSft } from '@/lib/engine/train/sft';
import { resolvedSftConfigSchema } from '@/lib/schemas/training-jobs';
import { TrainingError, type TrainingHandler } from '../runner';
import { SftHelperThread } from '../training-threads';
import { loadTrainingModel } from './load-model';

/**
 * SFT on the built-in engine (docs/contract.md §3.2): one gradient_step per batch, then the trained weights. An empty
 * dataset still completes with a copy of the weights (docs/contract.md §2.7).
 */
export const sftHandler: TrainingHandler = async (ctx) => {
  if (ctx.input.kind !== 'sft') throw new TrainingError('SFT handler received a non-SFT job');
  const parsed = resolvedSftConfigSchema.safeParse(ctx.job.config);
  if (!parsed.success)
    throw new TrainingError('The job configuration is invalid (batch_size, learning_rate, epochs, assistant_turns)');
  const config = parsed.data;
  const { examples, file } = ctx.input;
  // Servers before validation_split sent no `validation`.
  const validation = ctx.input.validation ?? [];
  const { model, tokenizer } = await loadTrainingModel(ctx);
  // Half of each batch on a second thread when the worker process allows it (training-threads.ts).
  const helper = config.batch_size > 1 && examples.length > 1 ? SftHelperThread.create(model.config) : null;
  try {
    await ctx.started(sftBatchCount(examples.length, config.batch_size, config.epochs));
    if (examples.length === 0) return { weights: ctx.baseWeights ?? encodeModel(model) };
    await trainSft(model, tokenizer, examples, {
      batchSize: config.batch_size,
      epochs: config.epochs,
      learningRate: config.learning_rate,
      assistantTurns: config.assistant_turns,
      file,
      signal: ctx.signal,
      validation,
      onStep: (m) => ctx.step({ ...m }),
      ...(helper ? { helper } : {}),
    });
    return { weights: encodeModel(model) };
  } catch (err) {
    if (err instanceof SftDataError) throw new TrainingError(err.message);
    throw err;
  } finally {
    await helper?.close();
    model.release();
  }
};
