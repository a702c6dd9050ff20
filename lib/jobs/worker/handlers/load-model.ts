import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BaseModelUnavailableError, baseModelSpec, loadBaseModel } from '@/lib/engine/base-models';
import type { Model } from '@/lib/engine/model';
import type { Tokenizer } from '@/lib/engine/tokenizer';
import { TrainingError, type TrainContext } from '../runner';

/**
 * The model a job trains from: the latest checkpoint's weights when there is one, else the job's base
 * model. lib/engine does no I/O, so a base model's committed weights file is read here; its path is
 * relative to the application's directory (the worker's working directory), as the server resolves it
 * (lib/services/builtin-models.ts), whatever TUNEBOARD_BASE_MODELS_DIR says.
 */
export async function loadTrainingModel(ctx: TrainContext): Promise<{ model: Model; tokenizer: Tokenizer }> {
  const name = ctx.job.base_model;
  const spec = baseModelSpec(name);
  if (!spec) throw new TrainingError(`Base model "${name}" is not available on this worker`);
  let weights = ctx.baseWeights;
  if (!weights && spec.weightsFile) {
    const file = path.resolve(process.cwd(), spec.weightsFile);
    weights = await readFile(file).then(
      (buf) => new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
      () => null,
    );
  }
  try {
    const { model, tokenizer } = loadBaseModel(name, weights);
    return { model, tokenizer };
  } catch (err) {
    if (err instanceof BaseModelUnavailableError) throw new TrainingError(err.message);
    const source = ctx.baseWeights ? `checkpoint step ${ctx.job.base_checkpoint?.step ?? '?'}` : `base model "${name}"`;
    throw new TrainingError(`The weights of ${source} could not be loaded: ${(err as Error).message}`);
  }
}
