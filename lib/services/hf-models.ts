import 'server-only';
import { packFiles } from '@/lib/engine/hf/bundle';
import type { BuiltinModelDescription } from '@/lib/inference/backends';
import { readArtifactBytes } from '@/lib/storage';

// The base's half (its folder read into a description) is lib/catalog/hf-folders.ts: the catalog checks the
// folders of the base-models file, and lib/catalog may not read the artifact store, where checkpoints live.

/**
 * A checkpoint of an `hf` base served by the built-in engine: the base's description with the checkpoint's
 * PEFT adapter (adapter_model.safetensors at `artifactKey`, adapter_config.json beside it) on top.
 */
export function hfCheckpointDescription(
  base: BuiltinModelDescription,
  checkpointId: string,
  artifactKey: string,
): BuiltinModelDescription {
  if (!base.hf || !base.loadWeights) throw new Error('not a Hugging Face base model description');
  const configKey = artifactKey.replace(/[^/]*$/, 'adapter_config.json');
  return {
    ...base,
    model: {
      key: `ckpt:${checkpointId}`,
      source: { kind: 'hf', baseKey: base.model.key, adapter: true },
      tokenizer: { kind: 'hf' },
    },
    loadWeights: async () => {
      const [weights, config] = await Promise.all([readArtifactBytes(artifactKey), readArtifactBytes(configKey)]);
      if (!weights || !config)
        throw new Error(`checkpoint adapter files missing from the artifact store: ${artifactKey}`);
      return packFiles(
        new Map([
          ['adapter_config.json', config],
          ['adapter_model.safetensors', weights],
        ]),
      );
    },
    hf: { ...base.hf, baseWeights: { key: base.model.key, load: base.loadWeights } },
  };
}
