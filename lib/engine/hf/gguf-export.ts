import {
  BYTE_TO_UNICODE,
  encodeGgufHeader,
  float32ToFloat16Bits,
  GGML_TYPE,
  GGUF_ALIGNMENT,
  GGUF_TOKEN_TYPE,
  permuteRotaryRows,
  type GgufValue,
  type TensorInfoOut,
} from '../gguf';
import { indexSafetensors, rawToFloat32, type RawTensor, type SafetensorsDType } from '../safetensors';
import { parseHfConfig, type HfModelConfig } from './config';
import { collectLoraFactors, parseLoraConfig, type LoraConfigSummary } from './lora';
import type { LoraModule } from './model';

/**
 * A Hugging Face Llama-family checkpoint as one GGUF file for llama.cpp and Ollama, what convert_hf_to_gguf.py
 * writes for it: `llama` architecture (Llama, Mistral, SmolLM2 layouts; q/k rows permuted for its adjacent-pair
 * RoPE), `qwen2` (q/k/v biases) or `qwen3` (per-head q/k norms); NEOX RoPE needs no permutation. Matrices in F16
 * or Q8_0, norms and biases in F32. A PEFT LoRA adapter, when given, is merged first: W' = W + scale·B·A, as
 * PEFT's merge_and_unload does (scale = lora_alpha / r, or / √r with use_rslora).
 *
 * With the model directory's tokenizer the file carries the real vocabulary, as llama.cpp's `gpt2` tokenizer
 * model reads it (tokenizer.json's byte-level strings, control and user-defined added tokens, merges, the
 * pre-tokenizer's name, bos/eos/pad, add_bos_token) and tokenizer.chat_template, so llama.cpp and Ollama
 * tokenise text and apply the chat template themselves. Without one (the inference benchmark, which feeds
 * token ids) a placeholder vocabulary of the right size.
 *
 * Streaming: the size and header are computed up front, then each tensor is produced a block of rows at a time
 * from an HfTensorSource (which does the I/O), so a 0.6B model never has more than one block in float32.
 * Checkpoints llama.cpp would run differently (rope scaling, an o_proj or llama bias, other tokenizers) are
 * refused with GgufExportRefused naming why.
 */
export type GgufMatrixType = 'F16' | 'Q8_0';

/** Why a checkpoint cannot become a GGUF file (a property of the checkpoint, not a failure of the server). */
export class GgufExportRefused extends Error {}

export interface HfTensorInfo {
  dtype: SafetensorsDType;
  shape: number[];
}

/** The base model's tensors, read a block of rows at a time. */
export interface HfTensorSource {
  info(name: string): HfTensorInfo | undefined;
  /** Rows [row0, row0 + rows) of a 2-D tensor, or the whole of a 1-D one (row0 0, rows 1). */
  read(name: string, row0: number, rows: number): RawTensor;
}

/** An in-memory source over safetensors files (every shard of a sharded checkpoint). */
export function memorySource(shards: readonly Uint8Array[]): HfTensorSource {
  const tensors = new Map<string, RawTensor>();
  for (const shard of shards) for (const [name, t] of indexSafetensors(shard).tensors) tensors.set(name, t);
  return {
    info: (name) => tensors.get(name),
    read: (name, row0, rows) => {
      const t = tensors.get(name);
      if (!t) throw new Error(`missing tensor ${name}`);
      return sliceRows(t, row0, rows);
    },
  };
}

/** Rows of a tensor that is in memory (1-D tensors count as one row). */
export function sliceRows(t: RawTensor, row0: number, rows: number): RawTensor {
  const total = t.shape.length === 1 ? 1 : t.shape[0];
  const rowBytes = t.bytes.length / total;
  const shape = t.shape.length === 1 ? [...t.shape] : [rows, ...t.shape.slice(1)];
  return { dtype: t.dtype, shape, bytes: t.bytes.subarray(row0 * rowBytes, (row0 + rows) * rowBytes) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------------------
// Tokenizer

/**
 * llama.cpp's name (tokenizer.ggml.pre) for the pre-tokenizer regexes it implements, keyed by the regex as
 * tokenizer.json spells it. convert_hf_to_gguf identifies the tokenizer by hashing its output on a test text;
 * comparing the regex picks the same names for these families without running the tokenizer.
 */
const PRE_TOKENIZERS: Record<string, string> = {
  // Qwen2, Qwen2.5, Qwen3: one digit per piece.
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    'qwen2',
  // Llama 3.x: up to three digits per piece.
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
    'llama-bpe',
};

function preTokenizerName(tokenizerJson: Record<string, unknown>): string {
  const pre = tokenizerJson.pre_tokenizer;
  const steps = isRecord(pre) && Array.isArray(pre.pretokenizers) ? pre.pretokenizers : [pre];
  for (const step of steps) {
    if (!isRecord(step) || step.type !== 'Split' || !isRecord(step.pattern)) continue;
    const regex = step.pattern.Regex;
    if (typeof regex === 'string' && PRE_TOKENIZERS[regex]) return PRE_TOKENIZERS[regex];
  }
  throw new GgufExportRefused(
    "its tokenizer's pre-tokenizer is not one llama.cpp implements under a known name (Qwen2/Qwen3 and Llama 3 tokenizers are)",
  );
}

/** convert_hf_to_gguf's does_token_look_special: added tokens it makes control tokens even when not special. */
function looksSpecial(text: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(text) ||
    (text.startsWith('<|') && text.endsWith('|>')) ||
    (text.startsWith('<｜') && text.endsWith('｜>')) ||
    (text.startsWith('<unused') && text.endsWith('>'))
  );
}

export interface HfTokenizerFiles {
  /** tokenizer.json, parsed. */
  json: unknown;
  /** tokenizer_config.json, parsed (chat_template.jinja's text already put in chat_template when it is separate). */
  config: unknown;
}

/**
 * The tokenizer.* keys convert_hf_to_gguf writes for a byte-level BPE tokenizer (its get_vocab_base and
 * SpecialVocab): one token per embedding row (`[PAD<id>]`, UNUSED, past the tokenizer), added tokens as their
 * plain text, CONTROL when special or looking special, else USER_DEFINED (llama.cpp then matches them in text).
 */
export function hfGgufTokenizerMetadata(
  files: HfTokenizerFiles,
  modelConfig: unknown,
  vocab: number,
): Map<string, GgufValue> {
  const tj = files.json;
  if (!isRecord(tj) || !isRecord(tj.model)) throw new GgufExportRefused('its tokenizer.json is not a tokenizer');
  const model = tj.model;
  if (model.type !== 'BPE' || !isRecord(model.vocab) || !isRecord(tj.decoder) || tj.decoder.type !== 'ByteLevel') {
    throw new GgufExportRefused('its tokenizer is not a byte-level BPE tokenizer (llama.cpp `gpt2` model)');
  }
  const tc = isRecord(files.config) ? files.config : {};
  const tokens = new Array<string | undefined>(vocab);
  const types = new Array<number>(vocab).fill(GGUF_TOKEN_TYPE.NORMAL);
  const ids = new Map<string, number>();
  for (const [text, id] of Object.entries(model.vocab)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) continue;
    if (id >= vocab) {
      throw new GgufExportRefused(`its tokenizer has token id ${id}, past the model's vocabulary (${vocab})`);
    }
    tokens[id] = text;
    ids.set(text, id);
  }
  const added = Array.isArray(tj.added_tokens) ? tj.added_tokens : [];
  for (const t of added) {
    if (!isRecord(t) || typeof t.id !== 'number' || typeof t.content !== 'string') continue;
    if (t.id >= vocab)
      throw new GgufExportRefused(`its tokenizer has token id ${t.id}, past the model's vocabulary (${vocab})`);
    tokens[t.id] = t.content;
    ids.set(t.content, t.id);
    types[t.id] =
      t.special === true || looksSpecial(t.content) ? GGUF_TOKEN_TYPE.CONTROL : GGUF_TOKEN_TYPE.USER_DEFINED;
  }
  const names: string[] = [];
  for (let id = 0; id < vocab; id++) {
    if (tokens[id] === undefined) {
      names.push(`[PAD${id}]`);
      types[id] = GGUF_TOKEN_TYPE.UNUSED;
    } else names.push(tokens[id]!);
  }
  const rawMerges = Array.isArray(model.merges) ? model.merges : [];
  // tokenizers ≥ 0.20 writes merges as pairs; older files as "a b" strings. GGUF takes the strings.
  const merges = rawMerges.map((m) => (Array.isArray(m) ? m.join(' ') : typeof m === 'string' ? m : String(m)));

  const m = new Map<string, GgufValue>();
  m.set('tokenizer.ggml.model', { type: 'string', value: 'gpt2' });
  m.set('tokenizer.ggml.pre', { type: 'string', value: preTokenizerName(tj) });
  m.set('tokenizer.ggml.tokens', { type: 'string[]', value: names });
  m.set('tokenizer.ggml.token_type', { type: 'i32[]', value: types });
  m.set('tokenizer.ggml.merges', { type: 'string[]', value: merges });
  // SpecialVocab: the token named in tokenizer_config.json, else config.json's <kind>_token_id.
  const cfg = isRecord(modelConfig) ? modelConfig : {};
  const name = (v: unknown): string | undefined =>
    typeof v === 'string' ? v : isRecord(v) && typeof v.content === 'string' ? v.content : undefined;
  for (const kind of ['bos', 'eos', 'unk', 'pad'] as const) {
    const text = name(tc[`${kind}_token`]);
    let id = text !== undefined ? ids.get(text) : undefined;
    const fromConfig = cfg[`${kind}_token_id`];
    if (id === undefined && Number.isInteger(fromConfig)) id = fromConfig as number;
    if (id !== undefined && id >= 0 && id < vocab) m.set(`tokenizer.ggml.${kind}_token_id`, { type: 'u32', value: id });
  }
  for (const kind of ['bos', 'eos'] as const) {
    const v = tc[`add_${kind}_token`];
    if (typeof v === 'boolean') m.set(`tokenizer.ggml.add_${kind}_token`, { type: 'bool', value: v });
  }
  if (typeof tc.chat_template === 'string')
    m.set('tokenizer.chat_template', { type: 'string', value: tc.chat_template });
  return m;
}

/** The benchmark's placeholder vocabulary: byte tokens, then `t<id>`, the last id a control end token. */
function placeholderTokenizer(vocab: number): Map<string, GgufValue> {
  const tokens: string[] = [];
  const types: number[] = [];
  for (let id = 0; id < vocab; id++) {
    if (id < 256) {
      tokens.push(BYTE_TO_UNICODE[id]);
      types.push(GGUF_TOKEN_TYPE.NORMAL);
    } else if (id === vocab - 1) {
      tokens.push('<|end|>');
      types.push(GGUF_TOKEN_TYPE.CONTROL);
    } else {
      tokens.push(`t${id}`);
      types.push(GGUF_TOKEN_TYPE.NORMAL);
    }
  }
  const m = new Map<string, GgufValue>();
  m.set('tokenizer.ggml.model', { type: 'string', value: 'gpt2' });
  m.set('tokenizer.ggml.pre', { type: 'string', value: 'qwen2' });
  m.set('tokenizer.ggml.tokens', { type: 'string[]', value: tokens });
  m.set('tokenizer.ggml.token_type', { type: 'i32[]', value: types });
  m.set('tokenizer.ggml.merges', { type: 'string[]', value: [] });
  m.set('tokenizer.ggml.bos_token_id', { type: 'u32', value: vocab - 1 });
  m.set('tokenizer.ggml.eos_token_id', { type: 'u32', value: vocab - 1 });
  m.set('tokenizer.ggml.add_bos_token', { type: 'bool', value: false });
  return m;
}

// ---------------------------------------------------------------------------------------------------------
// Tensors

function f16Bytes(data: Float32Array): Uint8Array {
  const out = new Uint16Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = float32ToFloat16Bits(data[i]);
  return new Uint8Array(out.buffer);
}

/** ggml's Q8_0: blocks of 32 values as an f16 scale d = max|x| / 127 and 32 int8 round(x / d). */
export function quantizeQ8_0(data: Float32Array): Uint8Array {
  if (data.length % 32 !== 0) throw new Error('Q8_0 needs rows that are a multiple of 32 values');
  const blocks = data.length / 32;
  const out = new Uint8Array(blocks * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(data[b * 32 + i]));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    view.setUint16(b * 34, float32ToFloat16Bits(d), true);
    for (let i = 0; i < 32; i++) view.setInt8(b * 34 + 2 + i, Math.round(data[b * 32 + i] * id));
  }
  return out;
}

/** W' = W + scale·B·A for a block of rows: a [r × K], b [N × r] (rows of the whole matrix), w [rows × K] from row0. */
export function addLoraDelta(
  w: Float32Array,
  row0: number,
  rows: number,
  a: Float32Array,
  b: Float32Array,
  rank: number,
  scale: number,
): void {
  const K = a.length / rank;
  for (let i = 0; i < rows; i++) {
    const o = i * K;
    for (let j = 0; j < rank; j++) {
      const s = scale * b[(row0 + i) * rank + j];
      if (s === 0) continue;
      const ar = j * K;
      for (let k = 0; k < K; k++) w[o + k] += s * a[ar + k];
    }
  }
}

interface PlannedTensor {
  info: TensorInfoOut;
  /** HF tensor whose rows are read. */
  source: string;
  rows: number;
  cols: number;
  /** Rows per head for the q/k permutation (llama architecture), or 0. */
  permuteHeadDim: number;
  lora?: { a: Float32Array; b: Float32Array };
}

export interface HfGgufInput {
  /** config.json, parsed. */
  config: unknown;
  /** The model's tokenizer; absent: a placeholder vocabulary (token-id-only use, the benchmark). */
  tokenizer?: HfTokenizerFiles;
  /** A PEFT LoRA adapter to merge. */
  adapter?: { config: unknown; weights: Uint8Array };
  matrixType: GgufMatrixType;
  /** general.name. */
  name?: string;
}

export interface HfGgufExport {
  /** Bytes of the whole file. */
  size: number;
  /** The file, header first then the tensors a block at a time (each yielded array is fresh). */
  chunks(): Generator<Uint8Array>;
}

/** Output bytes per block: a few MB keeps the float32 working copy of a 0.6B model's embedding to a slice. */
const BLOCK_VALUES = 1 << 20;

function bytesOf(type: number, values: number): number {
  if (type === GGML_TYPE.F32) return values * 4;
  if (type === GGML_TYPE.F16) return values * 2;
  return (values / 32) * 34;
}

/**
 * Plans the export (every refusal happens here, before a byte is produced) and returns its size and a generator
 * of its bytes.
 */
export function hfGgufExport(input: HfGgufInput, source: HfTensorSource): HfGgufExport {
  let c: HfModelConfig;
  try {
    c = parseHfConfig(input.config);
  } catch (err) {
    throw new GgufExportRefused((err as Error).message);
  }
  if (c.ropeScaling.type !== 'default') {
    throw new GgufExportRefused(
      `its config.json uses ${c.ropeScaling.type} rope scaling, which this export does not write`,
    );
  }
  const arch = c.modelType === 'qwen3' ? 'qwen3' : c.modelType === 'qwen2' ? 'qwen2' : 'llama';
  const matrixType = input.matrixType === 'F16' ? GGML_TYPE.F16 : GGML_TYPE.Q8_0;
  const need = (name: string, shape: number[]): HfTensorInfo => {
    const t = source.info(name);
    if (!t) throw new GgufExportRefused(`its weights lack ${name}`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new GgufExportRefused(`its weight ${name} has shape [${t.shape}], expected [${shape}]`);
    }
    return t;
  };

  // The adapter: parsed and checked by the serving engine's own rules, factors widened once (they are small).
  let lora: { config: LoraConfigSummary; factors: Map<string, { a: Float32Array; b: Float32Array }> } | null = null;
  let headCopy: RawTensor | null = null;
  const shapes = projectionShapes(c);
  const projShape = (module: LoraModule): [number, number] => shapes[module];
  if (input.adapter) {
    try {
      const config = parseLoraConfig(input.adapter.config);
      const { pairs, headCopy: copy } = collectLoraFactors(
        { layers: c.layers, vocab: c.vocab, hidden: c.hidden, projectionShape: (_l, m) => projShape(m) },
        config,
        indexSafetensors(input.adapter.weights).tensors,
      );
      headCopy = copy;
      const factors = new Map<string, { a: Float32Array; b: Float32Array }>();
      for (const p of pairs) {
        const key = p.target === 'lm_head' ? 'lm_head.weight' : hfProjection(p.target.layer, p.target.module);
        factors.set(key, { a: rawToFloat32(p.a), b: rawToFloat32(p.b) });
      }
      lora = { config, factors };
    } catch (err) {
      throw new GgufExportRefused(`its adapter cannot be merged: ${(err as Error).message}`);
    }
  }

  const planned: PlannedTensor[] = [];
  let offset = 0;
  const add = (
    ggufName: string,
    hfName: string,
    shape: number[],
    options: { permute?: boolean; out?: string } = {},
  ) => {
    need(hfName, shape);
    const matrix = shape.length === 2;
    const type = matrix ? matrixType : GGML_TYPE.F32;
    const cols = matrix ? shape[1] : shape[0];
    if (type === GGML_TYPE.Q8_0 && cols % 32 !== 0) {
      throw new GgufExportRefused(`Q8_0 needs rows of a multiple of 32 values; ${hfName} has ${cols}`);
    }
    const info: TensorInfoOut = { name: ggufName, dims: [...shape].reverse(), type, offset };
    const factors = lora?.factors.get(options.out ?? hfName);
    planned.push({
      info,
      source: hfName,
      rows: matrix ? shape[0] : 1,
      cols,
      permuteHeadDim: options.permute ? c.headDim : 0,
      lora: factors,
    });
    offset +=
      Math.ceil(
        bytesOf(
          type,
          shape.reduce((x, y) => x * y, 1),
        ) / GGUF_ALIGNMENT,
      ) * GGUF_ALIGNMENT;
  };
  const h = c.hidden;
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  add('token_embd.weight', 'model.embed_tokens.weight', [c.vocab, h]);
  const permute = arch === 'llama';
  for (let l = 0; l < c.layers; l++) {
    const hf = `model.layers.${l}`;
    const blk = `blk.${l}`;
    add(`${blk}.attn_norm.weight`, `${hf}.input_layernorm.weight`, [h]);
    add(`${blk}.attn_q.weight`, `${hf}.self_attn.q_proj.weight`, [q, h], { permute });
    add(`${blk}.attn_k.weight`, `${hf}.self_attn.k_proj.weight`, [kv, h], { permute });
    add(`${blk}.attn_v.weight`, `${hf}.self_attn.v_proj.weight`, [kv, h]);
    add(`${blk}.attn_output.weight`, `${hf}.self_attn.o_proj.weight`, [h, q]);
    const bias = ['q', 'k', 'v', 'o'].filter((p) => source.info(`${hf}.self_attn.${p}_proj.bias`));
    if (bias.length > 0) {
      // llama.cpp's qwen2 graph adds q/k/v biases; no architecture here takes an o_proj bias.
      if (arch !== 'qwen2' || bias.includes('o') || bias.length !== 3) {
        throw new GgufExportRefused(
          `its ${arch} layers have ${bias.map((p) => `${p}_proj`).join('/')} biases, which llama.cpp's ${arch} architecture does not take`,
        );
      }
      add(`${blk}.attn_q.bias`, `${hf}.self_attn.q_proj.bias`, [q]);
      add(`${blk}.attn_k.bias`, `${hf}.self_attn.k_proj.bias`, [kv]);
      add(`${blk}.attn_v.bias`, `${hf}.self_attn.v_proj.bias`, [kv]);
    } else if (arch === 'qwen2') {
      throw new GgufExportRefused('its qwen2 layers lack the q/k/v biases llama.cpp expects');
    }
    if (arch === 'qwen3') {
      add(`${blk}.attn_q_norm.weight`, `${hf}.self_attn.q_norm.weight`, [c.headDim]);
      add(`${blk}.attn_k_norm.weight`, `${hf}.self_attn.k_norm.weight`, [c.headDim]);
    }
    add(`${blk}.ffn_norm.weight`, `${hf}.post_attention_layernorm.weight`, [h]);
    add(`${blk}.ffn_gate.weight`, `${hf}.mlp.gate_proj.weight`, [c.intermediate, h]);
    add(`${blk}.ffn_up.weight`, `${hf}.mlp.up_proj.weight`, [c.intermediate, h]);
    add(`${blk}.ffn_down.weight`, `${hf}.mlp.down_proj.weight`, [h, c.intermediate]);
  }
  add('output_norm.weight', 'model.norm.weight', [h]);
  const headName = source.info('lm_head.weight') ? 'lm_head.weight' : null;
  if (!headName && !c.tieEmbeddings) throw new GgufExportRefused('its weights lack lm_head.weight (untied embeddings)');
  // A tied model whose head the adapter changes gets its own output.weight (embedding + delta); the input
  // embedding stays the base's, as PEFT leaves it. llama.cpp uses output.weight when the file has one.
  if (headName) add('output.weight', headName, [c.vocab, h], { out: 'lm_head.weight' });
  else if (lora?.factors.has('lm_head.weight'))
    add('output.weight', 'model.embed_tokens.weight', [c.vocab, h], { out: 'lm_head.weight' });
  if (headCopy) checkHeadCopy(source, headName ?? 'model.embed_tokens.weight', headCopy, c);
  if (lora) {
    for (const [name] of lora.factors) {
      const used = planned.some((p) => p.lora === lora!.factors.get(name));
      if (!used) throw new Error(`adapter factors for ${name} were not merged`);
    }
  }

  const metadata = new Map<string, GgufValue>();
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  metadata.set('general.architecture', { type: 'string', value: arch });
  metadata.set('general.name', { type: 'string', value: input.name ?? 'tuneboard-hf' });
  metadata.set('general.alignment', u32(GGUF_ALIGNMENT));
  metadata.set('general.file_type', u32(matrixType === GGML_TYPE.F16 ? 1 : 7)); // MOSTLY_F16 / MOSTLY_Q8_0
  metadata.set('general.quantization_version', u32(2)); // GGML_QNT_VERSION, as gguf-py writes it
  metadata.set(`${arch}.context_length`, u32(c.ctx));
  metadata.set(`${arch}.embedding_length`, u32(c.hidden));
  metadata.set(`${arch}.block_count`, u32(c.layers));
  metadata.set(`${arch}.feed_forward_length`, u32(c.intermediate));
  metadata.set(`${arch}.attention.head_count`, u32(c.heads));
  metadata.set(`${arch}.attention.head_count_kv`, u32(c.kvHeads));
  metadata.set(`${arch}.attention.key_length`, u32(c.headDim));
  metadata.set(`${arch}.attention.value_length`, u32(c.headDim));
  metadata.set(`${arch}.rope.freq_base`, f32(c.ropeTheta));
  metadata.set(`${arch}.rope.dimension_count`, u32(c.headDim));
  metadata.set(`${arch}.attention.layer_norm_rms_epsilon`, f32(c.normEps));
  metadata.set(`${arch}.vocab_size`, u32(c.vocab));
  const tokenizer = input.tokenizer
    ? hfGgufTokenizerMetadata(input.tokenizer, input.config, c.vocab)
    : placeholderTokenizer(c.vocab);
  for (const [k, v] of tokenizer) metadata.set(k, v);

  const header = encodeGgufHeader(
    metadata,
    planned.map((p) => p.info),
  );
  const size = header.length + offset;
  const scale = lora?.config.scale ?? 0;
  const rank = lora?.config.rank ?? 0;
  return {
    size,
    *chunks() {
      yield header;
      let written = 0;
      for (const p of planned) {
        let block = Math.max(1, Math.floor(BLOCK_VALUES / p.cols));
        if (p.permuteHeadDim) block = Math.max(1, Math.floor(block / p.permuteHeadDim)) * p.permuteHeadDim;
        let bytes = 0;
        for (let r0 = 0; r0 < p.rows; r0 += block) {
          const n = Math.min(block, p.rows - r0);
          let data = rawToFloat32(source.read(p.source, r0, n));
          if (p.lora) addLoraDelta(data, r0, n, p.lora.a, p.lora.b, rank, scale);
          if (p.permuteHeadDim) data = permuteRotaryRows(data, n / p.permuteHeadDim, p.cols);
          const out =
            p.info.type === GGML_TYPE.F32
              ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
              : p.info.type === GGML_TYPE.F16
                ? f16Bytes(data)
                : quantizeQ8_0(data);
          bytes += out.length;
          yield out;
        }
        const padded = Math.ceil(bytes / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
        if (padded > bytes) yield new Uint8Array(padded - bytes);
        written += padded;
      }
      if (written !== offset) throw new Error(`GGUF export wrote ${written} tensor bytes, planned ${offset}`);
    },
  };
}

function hfProjection(layer: number, module: LoraModule): string {
  const mlp = module === 'gate' || module === 'up' || module === 'down';
  return `model.layers.${layer}.${mlp ? 'mlp' : 'self_attn'}.${module}_proj.weight`;
}

/** PEFT's saved copy of the frozen head must be the base's own (lora.ts says why), compared a block at a time. */
function checkHeadCopy(source: HfTensorSource, head: string, copy: RawTensor, c: HfModelConfig): void {
  if (copy.shape.length !== 2 || copy.shape[0] !== c.vocab || copy.shape[1] !== c.hidden) {
    throw new GgufExportRefused(
      `its adapter's copy of the output head has shape [${copy.shape}] where the base model's is [${c.vocab}, ${c.hidden}]`,
    );
  }
  const block = Math.max(1, Math.floor(65536 / c.hidden));
  for (let r0 = 0; r0 < c.vocab; r0 += block) {
    const n = Math.min(block, c.vocab - r0);
    const x = rawToFloat32(source.read(head, r0, n));
    const y = rawToFloat32(sliceRows(copy, r0, n));
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) {
        throw new GgufExportRefused(
          "its adapter's copy of the output head differs from the base model's head (an adapter that replaces the head is not supported)",
        );
      }
    }
  }
}

/** The whole file in memory (tests and the benchmark; downloads stream hfGgufExport's chunks instead). */
export function exportHfGgufBytes(input: HfGgufInput, source: HfTensorSource): Uint8Array {
  const e = hfGgufExport(input, source);
  const out = new Uint8Array(e.size);
  let at = 0;
  for (const chunk of e.chunks()) {
    out.set(chunk, at);
    at += chunk.length;
  }
  if (at !== e.size) throw new Error(`GGUF export produced ${at} bytes, planned ${e.size}`);
  return out;
}

/** The benchmark's export: one safetensors file, placeholder vocabulary. */
export function exportHfGguf(configJson: unknown, safetensors: Uint8Array, matrixType: GgufMatrixType): Uint8Array {
  return exportHfGgufBytes({ config: configJson, matrixType }, memorySource([safetensors]));
}

/** Each LoRA-adaptable projection's weight shape, [out, in], as PEFT's factors multiply to it (both GGUF writers). */
export function projectionShapes(c: HfModelConfig): Record<LoraModule, [number, number]> {
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  return {
    q: [q, c.hidden],
    k: [kv, c.hidden],
    v: [kv, c.hidden],
    o: [c.hidden, q],
    gate: [c.intermediate, c.hidden],
    up: [c.intermediate, c.hidden],
    down: [c.hidden, c.intermediate],
  };
}
