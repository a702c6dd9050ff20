import { compileStructuredOutput, type StructuredOutputSpecInput } from '@/lib/engine/constrained';
import type { GenerationRequest } from '@/lib/engine/generate';
import type { ModelConfig } from '@/lib/engine/model';
import { choiceGenerator, Generator } from '@/lib/engine/random';
import type { SamplingParams } from '@/lib/engine/sampler';
import type { TokenPieces, TokenizerConfig } from '@/lib/engine/tokenizer';
import type { EngineEvent } from './engine-events';
import type { PromptPositionLogprobs } from './logprobs';

/** Messages between the server thread and inference worker threads (structured-clone friendly). */

/** Where a model's weights come from. `key` identifies the weights for the workers' caches. */
export type ModelSource =
  | { kind: 'random'; config: ModelConfig; seed: number }
  | { kind: 'weights'; byteLength?: number }
  /**
   * A Hugging Face model served by the built-in engine. The base directory arrives (bundled) under
   * `baseKey`; with `adapter`, this model's own key brings a PEFT adapter applied on top of that base,
   * which every checkpoint of the base shares within a thread. With `engine: 'llama.cpp'` (a base, never an adapter)
   * the bundle holds the small files and `llama-cpp.json` (LlamaCppBundleInfo): the thread opens that GGUF file with
   * llama.cpp instead of loading the safetensors weights.
   */
  | { kind: 'hf'; baseKey: string; adapter: boolean; engine?: 'llama.cpp' };

/** `llama-cpp.json` in a llama.cpp base's bundle: the GGUF file (written and checked by the server) and its shape. */
export interface LlamaCppBundleInfo {
  gguf: string;
  /** A checkpoint's llama.cpp LoRA adapter file, applied at run time (lib/engine/hf/gguf-lora.ts), or null. */
  lora: string | null;
  /** The file's size (what the thread's model cache counts for it). */
  bytes: number;
  slots: number;
  ctx: number;
}

/**
 * How a thread builds the model's tokenizer (structured-output masks and stop handling need it there too).
 * It comes from the base model's description, never from a default, so a model and its tokenizer cannot
 * disagree between the request thread and the generating thread.
 */
export type TokenizerSpec = { kind: 'byte'; config: TokenizerConfig } | { kind: 'hf' };

export interface ModelSpec {
  key: string;
  source: ModelSource;
  tokenizer: TokenizerSpec;
}

/** A GenerationRequest without its Generator and constraint (not cloneable): the seed and spec travel instead. */
export interface WireSequence extends Omit<GenerationRequest, 'generator' | 'sampling' | 'constraint'> {
  sampling: Omit<SamplingParams, 'logitBias'> & { logitBias?: [number, number][] };
  /** null: unseeded (a fresh random stream); else choice i uses seed + i (docs/contract.md §8.6). */
  seed: string | null;
  choice: number;
  /** Structured output to enforce, compiled in the worker thread (constraints hold per-thread caches). */
  structuredOutput?: StructuredOutputSpecInput | null;
}

export type ToWorker =
  | { type: 'generate'; id: string; model: ModelSpec; sequences: WireSequence[]; promptLogprobs: number | null }
  | { type: 'abort'; id: string }
  | { type: 'weights'; key: string; bytes: ArrayBuffer | null; error?: string };

export type FromWorker =
  | { type: 'events'; id: string; events: EngineEvent[] }
  | { type: 'done'; id: string; promptLogprobs: (PromptPositionLogprobs | null)[] | null }
  | { type: 'error'; id: string; message: string }
  /** The request's structured-output constraints compiled (or it had none): generation is under way. */
  | { type: 'accepted'; id: string }
  /** A structured output the engine cannot enforce (StructuredOutputCompileError's message): nothing was generated. */
  | { type: 'refused'; id: string; message: string }
  | { type: 'need-weights'; key: string }
  | { type: 'ready' };

export function toGenerationRequest(seq: WireSequence, tokenizer: TokenPieces): GenerationRequest {
  const { seed, choice, sampling, structuredOutput, ...rest } = seq;
  const generator =
    seed === null
      ? new Generator(BigInt(Math.floor(Math.random() * 2 ** 52)) * 4096n + BigInt(Math.floor(Math.random() * 4096)))
      : choiceGenerator(BigInt(seed), choice);
  return {
    ...rest,
    sampling: { ...sampling, logitBias: sampling.logitBias ? new Map(sampling.logitBias) : null },
    generator,
    // The compiled grammar is cached per thread, so n choices and repeated requests compile once. Its only
    // terminator is the tokenizer's EOS, as in vLLM's grammar backends: a stop_token_ids id is not part of
    // the language, so it is masked like any other token the grammar does not allow.
    constraint: structuredOutput
      ? compileStructuredOutput(structuredOutput, tokenizer, rest.eosTokenId != null ? [rest.eosTokenId] : [])
      : null,
  };
}
