import { BUILTIN_CHAT_TEMPLATE, IM_END } from './chat-template';
import { Model, type ModelConfig } from './model';
import { decodeModel } from './safetensors';
import { Tokenizer, defaultTokenizerConfig, type TokenizerConfig } from './tokenizer';
import type { WasmHeap } from './wasm/heap';

/**
 * Built-in base models, by the name clients pass as `base_model`. Pure: a spec says where its weights come
 * from, and the caller (lib/jobs, lib/inference) reads any file and passes the bytes in — the engine does
 * no I/O.
 */

export interface BaseModelSpec {
  name: string;
  config: ModelConfig;
  tokenizer: TokenizerConfig;
  chatTemplate: string;
  /**
   * The token that ends an assistant turn: chat generation stops on it (vLLM's EOS for chat), which is not
   * the tokenizer's document EOS for the built-in ChatML-style models.
   */
  chatEosToken: string;
  /** Seeded random init: the weights need no file. */
  seed?: number;
  /**
   * Path of the committed safetensors file, relative to the repository root, for models whose weights
   * were produced by a (pre)training script. The caller reads it; absent means a seeded init.
   */
  weightsFile?: string;
}

const byteTokenizer = defaultTokenizerConfig();
const BYTE_VOCAB = new Tokenizer(byteTokenizer).vocabSize;

/** The built-in tiny models' shape: 2 layers, d=128, byte vocabulary, ctx 256 (benchmarks use it too). */
export const TINY_MODEL_CONFIG: ModelConfig = {
  vocab: BYTE_VOCAB,
  d_model: 128,
  n_layers: 2,
  n_heads: 4,
  n_kv_heads: 4,
  d_ff: 512,
  ctx: 256,
  rope_theta: 10000,
  norm_eps: 1e-5,
  tie_embeddings: true,
};

export const BASE_MODELS: Readonly<Record<string, BaseModelSpec>> = {
  'tuneboard/tiny-random': {
    name: 'tuneboard/tiny-random',
    config: TINY_MODEL_CONFIG,
    tokenizer: byteTokenizer,
    chatTemplate: BUILTIN_CHAT_TEMPLATE,
    chatEosToken: IM_END,
    seed: 20251201,
  },
  'tuneboard/tiny-chat': {
    name: 'tuneboard/tiny-chat',
    config: TINY_MODEL_CONFIG,
    tokenizer: byteTokenizer,
    chatTemplate: BUILTIN_CHAT_TEMPLATE,
    chatEosToken: IM_END,
    weightsFile: 'models/tiny-chat.safetensors',
  },
};

export function baseModelSpec(name: string): BaseModelSpec | undefined {
  return Object.hasOwn(BASE_MODELS, name) ? BASE_MODELS[name] : undefined;
}

/** A base model that cannot be built: unknown name, or weights that are not there yet. Safe to show users. */
export class BaseModelUnavailableError extends Error {}

/**
 * Builds a model: from `weights` (safetensors bytes of a checkpoint or of the spec's weights file) when
 * given, else from the spec's seeded init. A spec with a weights file and no bytes cannot be built.
 */
export function loadBaseModel(
  name: string,
  weights: Uint8Array | null,
  options: { heap?: WasmHeap } = {},
): { model: Model; spec: BaseModelSpec; tokenizer: Tokenizer } {
  const spec = baseModelSpec(name);
  if (!spec)
    throw new BaseModelUnavailableError(
      `Unknown base model "${name}"; built-in models: ${Object.keys(BASE_MODELS).join(', ')}`,
    );
  const tokenizer = new Tokenizer(spec.tokenizer);
  if (weights) return { model: decodeModel(weights, { heap: options.heap }), spec, tokenizer };
  if (spec.seed === undefined) {
    throw new BaseModelUnavailableError(
      `The weights of base model "${name}" are not built yet (${spec.weightsFile ?? 'no weights file'} is missing)`,
    );
  }
  return { model: Model.create(spec.config, { seed: spec.seed, heap: options.heap }), spec, tokenizer };
}
