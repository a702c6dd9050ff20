import { BUILTIN_CHAT_TEMPLATE } from './chat-template';
import { headDim, type Model, type ModelConfig } from './model';
import type { Tokenizer } from './tokenizer';

/**
 * GGUF v3 export (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) in llama.cpp's `llama`
 * layout, so llama.cpp, node-llama-cpp, Ollama or LM Studio can run a model trained here. It is what
 * convert_hf_to_gguf.py produces for an HF Llama checkpoint: the same tensor names, the same hyper-parameter
 * keys and its q/k row permutation, because our weights have HF semantics (rotate_half RoPE) while llama.cpp's
 * `llama` architecture rotates adjacent pairs.
 *
 * The tokenizer is exported as a GPT-2-style byte-level BPE (`tokenizer.ggml.model = "gpt2"`): every byte is a
 * token spelled in GPT-2's byte-to-unicode alphabet, merges are written in rank order, and the special tokens
 * are control tokens. With no merges (the default byte vocabulary) llama.cpp tokenises exactly as we do; with
 * merges it can differ where llama.cpp's pre-tokenizer splits words differently from ours (see README).
 *
 * Pure: builds the file in memory and returns its bytes.
 */

export interface GgufExportOptions {
  /** `general.name`. */
  name?: string;
  /**
   * Storage type of the matrices. Norm vectors always stay F32, as convert_hf_to_gguf keeps 1-D tensors.
   * F16 halves the file and llama.cpp's memory; F32 (default) reproduces our logits to float rounding.
   */
  dtype?: 'F32' | 'F16';
  /** `tokenizer.chat_template` (Jinja). Default: the built-in ChatML template; null leaves it out. */
  chatTemplate?: string | null;
  /**
   * `tokenizer.ggml.pre`: which of llama.cpp's built-in pre-tokenizer regexes splits text before the merges
   * (llama.cpp cannot take our own rule). Irrelevant without merges. Default "qwen2": among the candidates
   * measured (README) it is close to ours and, unlike "gpt-2", leaves llama_detokenize's
   * clean_up_tokenization_spaces off, so " ." is not rewritten to "." when llama.cpp detokenizes.
   */
  preTokenizer?: string;
}

/** GGUF metadata value types (gguf.h `enum gguf_type`). */
export const GGUF_TYPE = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

/** ggml tensor types we write or read. */
export const GGML_TYPE = { F32: 0, F16: 1, Q8_0: 8 } as const;

/** llama.cpp's `llama_token_type` (tokenizer.ggml.token_type). */
export const GGUF_TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const GGUF_VERSION = 3;
const ALIGNMENT = 32; // GGUF_DEFAULT_ALIGNMENT; written explicitly as general.alignment too
export const GGUF_ALIGNMENT = ALIGNMENT;

/** A metadata value with the exact GGUF type llama.cpp expects (it rejects e.g. a u64 where it reads a u32). */
export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'string[]'; value: readonly string[] }
  | { type: 'i32[]'; value: readonly number[] }
  | { type: 'f32[]'; value: readonly number[] };

export interface TensorOut {
  name: string;
  /** ggml order: dims[0] is the innermost (contiguous) dimension, i.e. HF shape reversed. */
  dims: number[];
  type: number;
  bytes: Uint8Array;
}

/**
 * GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes are shifted to
 * U+0100… so every token is a printable string; llama.cpp's BPE vocabulary uses the same alphabet.
 */
export const BYTE_TO_UNICODE: readonly string[] = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let n = 0;
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(printable(b) ? b : 256 + n++));
  return out;
})();

function byteLevelText(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += BYTE_TO_UNICODE[b];
  return s;
}

/** Vocabulary, token types and merges as llama.cpp's `gpt2` tokenizer model reads them. */
export function ggufVocabulary(
  tokenizer: Tokenizer,
  modelVocab: number = tokenizer.vocabSize,
): { tokens: string[]; types: number[]; merges: string[] } {
  if (modelVocab < tokenizer.vocabSize)
    throw new Error(`model vocabulary (${modelVocab}) is smaller than the tokenizer's (${tokenizer.vocabSize})`);
  const tokens: string[] = [];
  const types: number[] = [];
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    if (tokenizer.isSpecial(id)) {
      // Specials keep their plain text: llama.cpp matches control tokens' text in the input when parsing
      // special tokens, and never byte-decodes them.
      tokens.push(tokenizer.tokenText(id));
      types.push(GGUF_TOKEN_TYPE.CONTROL);
    } else {
      tokens.push(byteLevelText(tokenizer.tokenBytes(id)));
      types.push(GGUF_TOKEN_TYPE.NORMAL);
    }
  }
  // Embedding rows past the tokenizer (a vocabulary padded for alignment) become unused placeholders, named
  // as convert_hf_to_gguf names them; llama.cpp requires one token per embedding row.
  for (let id = tokenizer.vocabSize; id < modelVocab; id++) {
    tokens.push(`[PAD${id}]`);
    types.push(GGUF_TOKEN_TYPE.UNUSED);
  }
  const merges = tokenizer.config.merges.map(([a, b]) => `${tokens[a]} ${tokens[b]}`);
  return { tokens, types, merges };
}

/**
 * convert_hf_to_gguf's LlamaModel.permute: within each head, HF's row order [x₀…x_{h/2−1} | x_{h/2}…x_{h−1}]
 * (rotate_half pairs i with i + h/2) becomes [x₀, x_{h/2}, x₁, x_{h/2+1}, …], so llama.cpp's adjacent-pair
 * RoPE rotates the same pairs. q and k projections only; attention scores are unchanged because q and k
 * are permuted alike.
 */
export function permuteRotaryRows(w: Float32Array, heads: number, cols: number): Float32Array {
  const rows = w.length / cols;
  if (!Number.isInteger(rows) || rows % heads !== 0 || (rows / heads) % 2 !== 0)
    throw new Error(`cannot permute ${rows} rows for ${heads} heads`);
  const hd = rows / heads;
  const half = hd / 2;
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const src = (h * hd + j * half + i) * cols;
        const dst = (h * hd + 2 * i + j) * cols;
        out.set(w.subarray(src, src + cols), dst);
      }
    }
  }
  return out;
}

/** The inverse of permuteRotaryRows (GGUF → HF order). */
export function unpermuteRotaryRows(w: Float32Array, heads: number, cols: number): Float32Array {
  const rows = w.length / cols;
  const hd = rows / heads;
  const half = hd / 2;
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const src = (h * hd + 2 * i + j) * cols;
        const dst = (h * hd + j * half + i) * cols;
        out.set(w.subarray(src, src + cols), dst);
      }
    }
  }
  return out;
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE binary16 bits of x, rounded to nearest even (as numpy's astype(float16) does). */
export function float32ToFloat16Bits(x: number): number {
  f32Scratch[0] = x;
  const bits = u32Scratch[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow → inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the implicit-1 mantissa into place and round.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | h;
}

export function float16BitsToFloat32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Raw little-endian bytes of a tensor (hosts are little-endian, as safetensors.ts assumes). */
function tensorBytes(data: Float32Array, type: number): Uint8Array {
  // No copy: `data` is always a fresh array (Model.getTensor copies, and so does the q/k permutation).
  if (type === GGML_TYPE.F32) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const half = new Uint16Array(data.length);
  for (let i = 0; i < data.length; i++) half[i] = float32ToFloat16Bits(data[i]);
  return new Uint8Array(half.buffer);
}

/** The llama.* hyper-parameters and general.* keys for a config (types as llama.cpp's loader checks them). */
export function ggufModelMetadata(
  config: ModelConfig,
  options: { name?: string; fileType?: number } = {},
): Map<string, GgufValue> {
  const m = new Map<string, GgufValue>();
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  m.set('general.architecture', { type: 'string', value: 'llama' });
  m.set('general.name', { type: 'string', value: options.name ?? 'tuneboard' });
  m.set('general.alignment', u32(ALIGNMENT));
  m.set('general.file_type', u32(options.fileType ?? 0)); // LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1
  m.set('llama.context_length', u32(config.ctx));
  m.set('llama.embedding_length', u32(config.d_model));
  m.set('llama.block_count', u32(config.n_layers));
  m.set('llama.feed_forward_length', u32(config.d_ff));
  m.set('llama.attention.head_count', u32(config.n_heads));
  m.set('llama.attention.head_count_kv', u32(config.n_kv_heads));
  m.set('llama.rope.freq_base', f32(config.rope_theta));
  m.set('llama.attention.layer_norm_rms_epsilon', f32(config.norm_eps));
  m.set('llama.vocab_size', u32(config.vocab));
  m.set('llama.rope.dimension_count', u32(headDim(config)));
  return m;
}

/** Exports a model and its tokenizer as a GGUF v3 file for llama.cpp's `llama` architecture. */
export function exportGguf(model: Model, tokenizer: Tokenizer, options: GgufExportOptions = {}): Uint8Array {
  const c = model.config;
  const dtype = options.dtype ?? 'F32';
  const matType = dtype === 'F16' ? GGML_TYPE.F16 : GGML_TYPE.F32;

  const metadata = ggufModelMetadata(c, { name: options.name, fileType: dtype === 'F16' ? 1 : 0 });
  const vocab = ggufVocabulary(tokenizer, c.vocab);
  metadata.set('tokenizer.ggml.model', { type: 'string', value: 'gpt2' });
  metadata.set('tokenizer.ggml.pre', { type: 'string', value: options.preTokenizer ?? 'qwen2' });
  metadata.set('tokenizer.ggml.tokens', { type: 'string[]', value: vocab.tokens });
  metadata.set('tokenizer.ggml.token_type', { type: 'i32[]', value: vocab.types });
  // llama.cpp insists on the key for gpt2 vocabularies even when there are no merges.
  metadata.set('tokenizer.ggml.merges', { type: 'string[]', value: vocab.merges });
  metadata.set('tokenizer.ggml.bos_token_id', { type: 'u32', value: tokenizer.bosId });
  metadata.set('tokenizer.ggml.eos_token_id', { type: 'u32', value: tokenizer.eosId });
  metadata.set('tokenizer.ggml.padding_token_id', { type: 'u32', value: tokenizer.padId });
  const imEnd = tokenizer.specialTokenId('<|im_end|>');
  // End of turn: llama.cpp stops generation at EOS and EOT alike, so chat replies end at <|im_end|>.
  if (imEnd !== undefined) metadata.set('tokenizer.ggml.eot_token_id', { type: 'u32', value: imEnd });
  // Our prompts carry no implicit BOS/EOS (vLLM chat requests default to add_special_tokens = false);
  // without these keys llama.cpp would prepend BOS to every prompt.
  metadata.set('tokenizer.ggml.add_bos_token', { type: 'bool', value: false });
  metadata.set('tokenizer.ggml.add_eos_token', { type: 'bool', value: false });
  const template = options.chatTemplate === undefined ? BUILTIN_CHAT_TEMPLATE : options.chatTemplate;
  if (template !== null) metadata.set('tokenizer.chat_template', { type: 'string', value: template });

  const tensors: TensorOut[] = [];
  const add = (name: string, hfName: string, transform?: (w: Float32Array) => Float32Array) => {
    const { shape } = model.parameterLocation(hfName);
    let data = model.getTensor(hfName);
    if (transform) data = transform(data);
    const type = shape.length === 1 ? GGML_TYPE.F32 : matType;
    tensors.push({ name, dims: [...shape].reverse(), type, bytes: tensorBytes(data, type) });
  };
  add('token_embd.weight', 'model.embed_tokens.weight');
  for (let l = 0; l < c.n_layers; l++) {
    const hf = `model.layers.${l}`;
    const blk = `blk.${l}`;
    add(`${blk}.attn_norm.weight`, `${hf}.input_layernorm.weight`);
    add(`${blk}.attn_q.weight`, `${hf}.self_attn.q_proj.weight`, (w) => permuteRotaryRows(w, c.n_heads, c.d_model));
    add(`${blk}.attn_k.weight`, `${hf}.self_attn.k_proj.weight`, (w) => permuteRotaryRows(w, c.n_kv_heads, c.d_model));
    add(`${blk}.attn_v.weight`, `${hf}.self_attn.v_proj.weight`);
    add(`${blk}.attn_output.weight`, `${hf}.self_attn.o_proj.weight`);
    add(`${blk}.ffn_norm.weight`, `${hf}.post_attention_layernorm.weight`);
    add(`${blk}.ffn_gate.weight`, `${hf}.mlp.gate_proj.weight`);
    add(`${blk}.ffn_up.weight`, `${hf}.mlp.up_proj.weight`);
    add(`${blk}.ffn_down.weight`, `${hf}.mlp.down_proj.weight`);
  }
  add('output_norm.weight', 'model.norm.weight');
  // Tied: no output.weight, and llama.cpp's llama loader falls back to token_embd for the lm_head.
  if (!c.tie_embeddings) add('output.weight', 'lm_head.weight');

  return encodeGguf(metadata, tensors);
}

/** Little-endian byte sink that grows by doubling. */
class ByteWriter {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private static readonly utf8 = new TextEncoder();

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  u8(v: number): void {
    this.reserve(1);
    this.buf[this.length++] = v;
  }
  string(s: string): void {
    const bytes = ByteWriter.utf8.encode(s);
    this.u64(bytes.length);
    this.reserve(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

function writeValue(w: ByteWriter, v: GgufValue): void {
  switch (v.type) {
    case 'u32':
      w.u32(GGUF_TYPE.UINT32);
      w.u32(v.value);
      return;
    case 'i32':
      w.u32(GGUF_TYPE.INT32);
      w.i32(v.value);
      return;
    case 'f32':
      w.u32(GGUF_TYPE.FLOAT32);
      w.f32(v.value);
      return;
    case 'bool':
      w.u32(GGUF_TYPE.BOOL);
      w.u8(v.value ? 1 : 0);
      return;
    case 'string':
      w.u32(GGUF_TYPE.STRING);
      w.string(v.value);
      return;
    case 'string[]':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.STRING);
      w.u64(v.value.length);
      for (const s of v.value) w.string(s);
      return;
    case 'i32[]':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.INT32);
      w.u64(v.value.length);
      for (const x of v.value) w.i32(x);
      return;
    case 'f32[]':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.FLOAT32);
      w.u64(v.value.length);
      for (const x of v.value) w.f32(x);
      return;
  }
}

const pad = (n: number) => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

/** A tensor's entry in the header: its data is written by the caller at `offset` into the data section. */
export interface TensorInfoOut {
  name: string;
  /** ggml order: dims[0] is the innermost (contiguous) dimension, i.e. HF shape reversed. */
  dims: number[];
  type: number;
  /** Byte offset into the data section, a multiple of the alignment. */
  offset: number;
}

/**
 * Everything before the data section: header (magic, version, tensor and KV counts), the KVs, the tensor infos
 * (name, dims, type, offset into the data section), zero padding to the alignment. Lets a writer stream the
 * tensors afterwards (each at an aligned offset) without holding the file.
 */
export function encodeGgufHeader(metadata: Map<string, GgufValue>, tensors: readonly TensorInfoOut[]): Uint8Array {
  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(tensors.length);
  w.u64(metadata.size);
  for (const [key, value] of metadata) {
    w.string(key);
    writeValue(w, value);
  }
  for (const t of tensors) {
    if (t.offset % ALIGNMENT !== 0) throw new Error(`gguf: tensor ${t.name} offset ${t.offset} is not aligned`);
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(t.offset);
  }
  const out = new Uint8Array(pad(w.length));
  out.set(w.bytes(), 0);
  return out;
}

/** The whole file: encodeGgufHeader, then each tensor's bytes at an aligned offset. */
export function encodeGguf(metadata: Map<string, GgufValue>, tensors: TensorOut[]): Uint8Array {
  let offset = 0;
  const infos: TensorInfoOut[] = tensors.map((t) => {
    const info = { name: t.name, dims: t.dims, type: t.type, offset };
    offset = pad(offset + t.bytes.length);
    return info;
  });
  const header = encodeGgufHeader(metadata, infos);
  const out = new Uint8Array(header.length + offset);
  out.set(header, 0);
  tensors.forEach((t, i) => out.set(t.bytes, header.length + infos[i].offset));
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Reader: enough of GGUF to check an export (and to inspect files from elsewhere). Metadata values are
// decoded to JS values; F32/F16 tensors are decoded to float32.

export type GgufMetadataValue = number | bigint | boolean | string | GgufMetadataValue[];

export interface GgufTensorInfo {
  name: string;
  dims: number[];
  type: number;
  /** Absolute byte offset of the tensor data in the file. */
  offset: number;
}

export interface GgufFile {
  version: number;
  metadata: Map<string, GgufMetadataValue>;
  tensors: GgufTensorInfo[];
  /** float32 copy of an F32 or F16 tensor, in ggml order (dims[0] contiguous). */
  tensorData(name: string): Float32Array;
}

export function readGguf(bytes: Uint8Array): GgufFile {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new Error('gguf: truncated file');
  };
  const u32 = () => (need(4), (at += 4), view.getUint32(at - 4, true));
  const u64 = () => {
    need(8);
    at += 8;
    const v = view.getBigUint64(at - 8, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('gguf: 64-bit length out of range');
    return Number(v);
  };
  const str = () => {
    const n = u64();
    need(n);
    at += n;
    return utf8.decode(bytes.subarray(at - n, at));
  };
  const scalar = (type: number): GgufMetadataValue => {
    switch (type) {
      case GGUF_TYPE.UINT8:
        return (need(1), bytes[at++]);
      case GGUF_TYPE.INT8:
        return (need(1), view.getInt8(at++));
      case GGUF_TYPE.UINT16:
        return (need(2), (at += 2), view.getUint16(at - 2, true));
      case GGUF_TYPE.INT16:
        return (need(2), (at += 2), view.getInt16(at - 2, true));
      case GGUF_TYPE.UINT32:
        return u32();
      case GGUF_TYPE.INT32:
        return (need(4), (at += 4), view.getInt32(at - 4, true));
      case GGUF_TYPE.FLOAT32:
        return (need(4), (at += 4), view.getFloat32(at - 4, true));
      case GGUF_TYPE.BOOL:
        return (need(1), bytes[at++] !== 0);
      case GGUF_TYPE.STRING:
        return str();
      case GGUF_TYPE.UINT64:
        return (need(8), (at += 8), view.getBigUint64(at - 8, true));
      case GGUF_TYPE.INT64:
        return (need(8), (at += 8), view.getBigInt64(at - 8, true));
      case GGUF_TYPE.FLOAT64:
        return (need(8), (at += 8), view.getFloat64(at - 8, true));
      case GGUF_TYPE.ARRAY: {
        const itemType = u32();
        const n = u64();
        const out: GgufMetadataValue[] = [];
        for (let i = 0; i < n; i++) out.push(scalar(itemType));
        return out;
      }
      default:
        throw new Error(`gguf: unknown value type ${type}`);
    }
  };

  if (u32() !== GGUF_MAGIC) throw new Error('gguf: bad magic');
  const version = u32();
  if (version !== 2 && version !== 3) throw new Error(`gguf: unsupported version ${version}`);
  const nTensors = u64();
  const nKv = u64();
  const metadata = new Map<string, GgufMetadataValue>();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    metadata.set(key, scalar(u32()));
  }
  const infos: GgufTensorInfo[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const nDims = u32();
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(u64());
    const type = u32();
    infos.push({ name, dims, type, offset: u64() });
  }
  const alignment = metadata.get('general.alignment');
  const align = typeof alignment === 'number' ? alignment : ALIGNMENT;
  const dataStart = Math.ceil(at / align) * align;
  for (const t of infos) t.offset += dataStart;

  return {
    version,
    metadata,
    tensors: infos,
    tensorData(name: string): Float32Array {
      const t = infos.find((x) => x.name === name);
      if (!t) throw new Error(`gguf: no tensor ${name}`);
      const n = t.dims.reduce((a, b) => a * b, 1);
      if (t.type === GGML_TYPE.F32) {
        if (t.offset + 4 * n > bytes.length) throw new Error(`gguf: tensor ${name} runs past the end`);
        const out = new Float32Array(n);
        for (let i = 0; i < n; i++) out[i] = view.getFloat32(t.offset + 4 * i, true);
        return out;
      }
      if (t.type === GGML_TYPE.F16) {
        if (t.offset + 2 * n > bytes.length) throw new Error(`gguf: tensor ${name} runs past the end`);
        const out = new Float32Array(n);
        for (let i = 0; i < n; i++) out[i] = float16BitsToFloat32(view.getUint16(t.offset + 2 * i, true));
        return out;
      }
      throw new Error(`gguf: tensor ${name} has type ${t.type}, only F32 and F16 are decoded`);
    },
  };
}
