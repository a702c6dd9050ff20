import 'server-only';
import fsp from 'node:fs/promises';
import { DEFAULT_LLAMA_CPP_SLOTS, type BaseModel } from '@/lib/catalog/base-models';
import { hfSmallFiles } from '@/lib/catalog/hf-folders';
import { packFiles } from '@/lib/engine/hf/bundle';
import type { BuiltinModelDescription } from '@/lib/inference/backends';
import type { LlamaCppBundleInfo } from '@/lib/inference/wire';
import { readArtifactBytes } from '@/lib/storage';
import { llamaCppGguf } from './llama-cpp-gguf';

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

/**
 * An `hf` base with `"engine": "llama.cpp"`: the WebAssembly description of the same directory (`base`), served by
 * llama.cpp from a GGUF file written once into the cache (lib/services/llama-cpp-gguf.ts). Its own key, so a
 * thread can hold it beside the WebAssembly copy its checkpoints run on (they keep `base`: see chat-models.ts).
 * The threads get the small files and `llama-cpp.json` (the file's path, slots, context), not the weights.
 */
export function llamaCppBaseDescription(
  base: BuiltinModelDescription,
  entry: BaseModel,
  dir: string,
): BuiltinModelDescription {
  if (!base.hf) throw new Error('not a Hugging Face base model description');
  const dtype = entry.dtype ?? 'f16';
  const slots = entry.slots ?? DEFAULT_LLAMA_CPP_SLOTS;
  const gguf = () => llamaCppGguf({ id: entry.id, dir, dtype });
  const key = `${base.model.key}@llama.cpp:${dtype}:${slots}`;
  return {
    ...base,
    model: {
      key,
      source: { kind: 'hf', baseKey: key, adapter: false, engine: 'llama.cpp' },
      tokenizer: { kind: 'hf' },
    },
    maxChoices: slots,
    prepare: async () => {
      await gguf();
    },
    loadWeights: async () => {
      const file = await gguf();
      const info: LlamaCppBundleInfo = {
        gguf: file,
        bytes: (await fsp.stat(file)).size,
        slots,
        ctx: base.contextLength,
      };
      const files = await hfSmallFiles(dir);
      files.set('llama-cpp.json', new TextEncoder().encode(JSON.stringify(info)));
      return packFiles(files);
    },
  };
}
