import { eosIds } from './config';
import { ChatTemplate } from '../chat-template';
import { HfModel, type HfLoadOptions } from './model';
import { LoraAdapter } from './lora';
import { HfTokenizer } from './tokenizer';

/**
 * The files of a Hugging Face model directory, already read by the caller (the engine does no I/O):
 * parsed JSON for the small files, bytes for the weights (every shard of a sharded checkpoint).
 */
export interface HfModelFiles {
  config: unknown;
  weights: readonly Uint8Array[];
  tokenizer: unknown;
  tokenizerConfig: unknown;
  /** generation_config.json, when the directory has one. */
  generationConfig?: unknown;
}

export interface LoadedHfModel {
  model: HfModel;
  tokenizer: HfTokenizer;
  template: ChatTemplate | null;
  /**
   * Ids that end generation: generation_config.json's eos_token_id (a list on chat models: end of turn and
   * end of text), else config.json's, else the tokenizer's eos token.
   */
  stopTokenIds: number[];
}

export function loadHfModel(files: HfModelFiles, options: HfLoadOptions = {}): LoadedHfModel {
  const model = HfModel.load(files.config, files.weights, options);
  try {
    const tokenizer = new HfTokenizer(files.tokenizer, files.tokenizerConfig, model.config.vocab);
    const template = tokenizer.chatTemplate
      ? new ChatTemplate(tokenizer.chatTemplate, { bosToken: tokenizer.bosToken, eosToken: tokenizer.eosToken })
      : null;
    let stop = eosIds(files.generationConfig);
    if (stop.length === 0) stop = model.hf.eosTokenIds;
    if (stop.length === 0 && tokenizer.eosId !== undefined) stop = [tokenizer.eosId];
    for (const id of stop) {
      if (id < 0 || id >= model.config.vocab)
        throw new Error(`eos_token_id ${id} is outside the vocabulary (${model.config.vocab})`);
    }
    return { model, tokenizer, template, stopTokenIds: [...new Set(stop)] };
  } catch (err) {
    model.release();
    throw err;
  }
}

export function loadLoraAdapter(base: HfModel, adapterConfig: unknown, adapterWeights: Uint8Array): LoraAdapter {
  return LoraAdapter.load(base, adapterConfig, adapterWeights);
}
