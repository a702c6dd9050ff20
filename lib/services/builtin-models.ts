import 'server-only';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { baseModelSpec } from '@/lib/engine/base-models';
import type { ModelConfig } from '@/lib/engine/model';
import type { ModelSpec } from '@/lib/inference/wire';

export interface BuiltinSource {
  spec: ModelSpec;
  loadWeights?: () => Promise<Uint8Array>;
  config: ModelConfig;
}

/**
 * How the inference threads get a built-in base model: seeded init needs nothing; a committed weights file
 * is read here (lib/engine does no I/O). Undefined when the id is not built in, or its weights file is not
 * there (the pretraining script has not been run), so the model is simply unavailable.
 */
export function builtinModelSource(id: string): BuiltinSource | undefined {
  const spec = baseModelSpec(id);
  if (!spec) return undefined;
  if (spec.seed !== undefined) {
    return { spec: { key: `base:${id}`, source: { kind: 'random', config: spec.config, seed: spec.seed } }, config: spec.config };
  }
  if (!spec.weightsFile) return undefined;
  const file = path.resolve(/*turbopackIgnore: true*/ process.cwd(), spec.weightsFile);
  if (!fs.existsSync(file)) return undefined;
  return {
    spec: { key: `base:${id}`, source: { kind: 'weights' } },
    loadWeights: async () => new Uint8Array(await fsp.readFile(file)),
    config: spec.config,
  };
}
