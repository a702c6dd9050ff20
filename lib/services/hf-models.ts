import 'server-only';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_LLAMA_CPP_SLOTS, type BaseModel } from '@/lib/catalog/base-models';
import { hfSmallFiles } from '@/lib/catalog/hf-folders';
import { packFiles } from '@/lib/engine/hf/bundle';
import type { BuiltinModelDescription } from '@/lib/inference/backends';
import type { LlamaCppBundleInfo } from '@/lib/inference/wire';
import { readArtifactBytes } from '@/lib/storage';
import { llamaCppGguf, llamaCppLoraGguf } from './llama-cpp-gguf';

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
 * thread can hold it beside a WebAssembly copy. The threads get the small files and `llama-cpp.json` (the file's
 * path, slots, context, and a checkpoint's LoRA file), not the weights.
 */
export function llamaCppBaseDescription(
  base: BuiltinModelDescription,
  entry: BaseModel,
  dir: string,
): BuiltinModelDescription {
  return llamaCppDescription(base, entry, dir, null);
}

/**
 * A checkpoint of a llama.cpp base: its PEFT adapter as a llama.cpp LoRA file applied at run time on the base's
 * GGUF file (a context of its own per thread, the file's pages shared). An adapter llama.cpp cannot apply as it is
 * (lib/engine/hf/gguf-lora.ts: the output head) is served by the WebAssembly engine instead (`onWasm`, what
 * `prepare` then resolves to).
 */
export function llamaCppCheckpointDescription(
  base: BuiltinModelDescription,
  entry: BaseModel,
  dir: string,
  checkpoint: { id: string; artifactKey: string; onWasm: BuiltinModelDescription },
): BuiltinModelDescription {
  return llamaCppDescription(base, entry, dir, checkpoint);
}

function llamaCppDescription(
  base: BuiltinModelDescription,
  entry: BaseModel,
  dir: string,
  checkpoint: { id: string; artifactKey: string; onWasm: BuiltinModelDescription } | null,
): BuiltinModelDescription {
  if (!base.hf) throw new Error('not a Hugging Face base model description');
  const dtype = entry.dtype ?? 'f16';
  const slots = entry.slots ?? DEFAULT_LLAMA_CPP_SLOTS;
  const files = async (): Promise<{ gguf: string; lora: string | null }> => {
    const gguf = await llamaCppGguf({ id: entry.id, dir, dtype });
    if (!checkpoint) return { gguf, lora: null };
    const configKey = checkpoint.artifactKey.replace(/[^/]*$/, 'adapter_config.json');
    const lora = await llamaCppLoraGguf({
      baseGguf: gguf,
      baseConfig: JSON.parse(await fsp.readFile(path.join(/*turbopackIgnore: true*/ dir, 'config.json'), 'utf8')),
      artifactKey: checkpoint.artifactKey,
      read: async () => {
        const [weights, config] = await Promise.all([
          readArtifactBytes(checkpoint.artifactKey),
          readArtifactBytes(configKey),
        ]);
        if (!weights || !config)
          throw new Error(`checkpoint adapter files missing from the artifact store: ${checkpoint.artifactKey}`);
        return { config, weights };
      },
    });
    return { gguf, lora };
  };
  const baseKey = `${base.model.key}@llama.cpp:${dtype}:${slots}`;
  const key = checkpoint ? `ckpt:${checkpoint.id}@llama.cpp:${dtype}:${slots}` : baseKey;
  return {
    ...base,
    model: {
      key,
      source: { kind: 'hf', baseKey, adapter: checkpoint !== null, engine: 'llama.cpp' },
      tokenizer: { kind: 'hf' },
    },
    maxChoices: slots,
    hf: { ...base.hf, baseWeights: undefined },
    prepare: async () => {
      const { lora } = await files();
      if (checkpoint && lora === null) return checkpoint.onWasm;
    },
    loadWeights: async () => {
      const { gguf, lora } = await files();
      if (checkpoint && lora === null) throw new Error('this checkpoint is served by the WebAssembly engine');
      const info: LlamaCppBundleInfo = {
        gguf,
        lora,
        bytes: (await fsp.stat(gguf)).size + (lora ? (await fsp.stat(lora)).size : 0),
        slots,
        ctx: base.contextLength,
      };
      const bundle = await hfSmallFiles(dir);
      bundle.set('llama-cpp.json', new TextEncoder().encode(JSON.stringify(info)));
      return packFiles(bundle);
    },
  };
}
