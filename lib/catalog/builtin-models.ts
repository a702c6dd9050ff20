import 'server-only';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { baseModelSpec, type BaseModelSpec } from '@/lib/engine/base-models';
import type { BuiltinModelDescription } from '@/lib/inference/backends';

/**
 * How the built-in engine serves a built-in base model, everything from its description (lib/engine's
 * BaseModelSpec): tokenizer, chat template, end-of-turn token, context length and where the weights are.
 * Seeded init needs no file; a committed weights file is read here (lib/engine does no I/O). Undefined when
 * the id is not built in, or its weights file is not there (the pretraining script has not been run), so
 * the model is simply unavailable.
 */
export function builtinModelSource(id: string): BuiltinModelDescription | undefined {
  const spec = baseModelSpec(id);
  if (!spec) return undefined;
  const description = (model: BuiltinModelDescription['model'], loadWeights?: () => Promise<Uint8Array>) => ({
    model,
    loadWeights,
    chatTemplate: spec.chatTemplate,
    chatEosToken: spec.chatEosToken,
    contextLength: spec.config.ctx,
  });
  const tokenizer = { kind: 'byte' as const, config: spec.tokenizer };
  if (spec.seed !== undefined) {
    return description({
      key: `base:${id}`,
      source: { kind: 'random', config: spec.config, seed: spec.seed },
      tokenizer,
    });
  }
  const file = builtinWeightsPath(spec);
  if (!file || !fs.existsSync(file)) return undefined;
  return description(
    { key: `base:${id}`, source: { kind: 'weights' }, tokenizer },
    async () => new Uint8Array(await fsp.readFile(file)),
  );
}

/**
 * Where a built-in base model's weights file is: shipped with the application (`models/…`), so it resolves against
 * the application's directory (the server's working directory), never TUNEBOARD_BASE_MODELS_DIR. That setting is for
 * the Hugging Face folders a user registers; resolving shipped weights against it made `tuneboard/tiny-chat`
 * unavailable as soon as it was set.
 */
export function builtinWeightsPath(spec: BaseModelSpec): string | undefined {
  return spec.weightsFile ? path.resolve(/*turbopackIgnore: true*/ process.cwd(), spec.weightsFile) : undefined;
}
