import {
  BYTE_TO_UNICODE,
  encodeGguf,
  float32ToFloat16Bits,
  GGML_TYPE,
  GGUF_TOKEN_TYPE,
  permuteRotaryRows,
  type GgufValue,
  type TensorOut,
} from '../gguf';
import { indexSafetensors, rawToFloat32, type RawTensor } from '../safetensors';
import { parseHfConfig } from './config';

/**
 * A Hugging Face Llama-family checkpoint as GGUF for llama.cpp (the benchmark's reference engine):
 * `llama` architecture (q/k rows permuted as convert_hf_to_gguf does, for its adjacent-pair RoPE) or
 * `qwen3` (NEOX RoPE, per-head q/k norms, no permutation), matrices in F16 or Q8_0, norms in F32. The
 * vocabulary is a placeholder of the right size (byte tokens, then `t<id>`): the benchmark feeds token ids,
 * so llama.cpp never tokenises text. Not a general converter (no biases, no rope scaling).
 */
export type GgufMatrixType = 'F16' | 'Q8_0';

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

export function exportHfGguf(configJson: unknown, safetensors: Uint8Array, matrixType: GgufMatrixType): Uint8Array {
  const c = parseHfConfig(configJson);
  if (c.ropeScaling.type !== 'default') throw new Error('GGUF export: rope scaling is not exported');
  const arch = c.modelType === 'qwen3' ? 'qwen3' : 'llama';
  const { tensors } = indexSafetensors(safetensors);
  const m = new Map<string, GgufValue>();
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const f32 = (value: number): GgufValue => ({ type: 'f32', value });
  m.set('general.architecture', { type: 'string', value: arch });
  m.set('general.name', { type: 'string', value: 'tuneboard-hf' });
  m.set('general.alignment', u32(32));
  m.set('general.file_type', u32(matrixType === 'F16' ? 1 : 7)); // MOSTLY_F16 / MOSTLY_Q8_0
  m.set(`${arch}.context_length`, u32(c.ctx));
  m.set(`${arch}.embedding_length`, u32(c.hidden));
  m.set(`${arch}.block_count`, u32(c.layers));
  m.set(`${arch}.feed_forward_length`, u32(c.intermediate));
  m.set(`${arch}.attention.head_count`, u32(c.heads));
  m.set(`${arch}.attention.head_count_kv`, u32(c.kvHeads));
  m.set(`${arch}.attention.key_length`, u32(c.headDim));
  m.set(`${arch}.attention.value_length`, u32(c.headDim));
  m.set(`${arch}.rope.freq_base`, f32(c.ropeTheta));
  m.set(`${arch}.rope.dimension_count`, u32(c.headDim));
  m.set(`${arch}.attention.layer_norm_rms_epsilon`, f32(c.normEps));
  m.set(`${arch}.vocab_size`, u32(c.vocab));
  const tokens: string[] = [];
  const types: number[] = [];
  for (let id = 0; id < c.vocab; id++) {
    if (id < 256) {
      tokens.push(BYTE_TO_UNICODE[id]);
      types.push(GGUF_TOKEN_TYPE.NORMAL);
    } else if (id === c.vocab - 1) {
      tokens.push('<|end|>');
      types.push(GGUF_TOKEN_TYPE.CONTROL);
    } else {
      tokens.push(`t${id}`);
      types.push(GGUF_TOKEN_TYPE.NORMAL);
    }
  }
  m.set('tokenizer.ggml.model', { type: 'string', value: 'gpt2' });
  m.set('tokenizer.ggml.pre', { type: 'string', value: 'qwen2' });
  m.set('tokenizer.ggml.tokens', { type: 'string[]', value: tokens });
  m.set('tokenizer.ggml.token_type', { type: 'i32[]', value: types });
  m.set('tokenizer.ggml.merges', { type: 'string[]', value: [] });
  m.set('tokenizer.ggml.bos_token_id', u32(c.vocab - 1));
  m.set('tokenizer.ggml.eos_token_id', u32(c.vocab - 1));
  m.set('tokenizer.ggml.add_bos_token', { type: 'bool', value: false });

  const out: TensorOut[] = [];
  const take = (name: string): RawTensor => {
    const t = tensors.get(name);
    if (!t) throw new Error(`GGUF export: missing tensor ${name}`);
    return t;
  };
  const add = (ggufName: string, hfName: string, permuteHeads = 0) => {
    const t = take(hfName);
    let data = rawToFloat32(t);
    if (t.shape.length === 1) {
      out.push({ name: ggufName, dims: [t.shape[0]], type: GGML_TYPE.F32, bytes: new Uint8Array(data.buffer) });
      return;
    }
    if (permuteHeads) data = permuteRotaryRows(data, permuteHeads, t.shape[1]);
    const type = matrixType === 'F16' ? GGML_TYPE.F16 : GGML_TYPE.Q8_0;
    out.push({
      name: ggufName,
      dims: [...t.shape].reverse(),
      type,
      bytes: matrixType === 'F16' ? f16Bytes(data) : quantizeQ8_0(data),
    });
  };
  add('token_embd.weight', 'model.embed_tokens.weight');
  const permute = arch === 'llama';
  for (let l = 0; l < c.layers; l++) {
    const hf = `model.layers.${l}`;
    const blk = `blk.${l}`;
    add(`${blk}.attn_norm.weight`, `${hf}.input_layernorm.weight`);
    add(`${blk}.attn_q.weight`, `${hf}.self_attn.q_proj.weight`, permute ? c.heads : 0);
    add(`${blk}.attn_k.weight`, `${hf}.self_attn.k_proj.weight`, permute ? c.kvHeads : 0);
    add(`${blk}.attn_v.weight`, `${hf}.self_attn.v_proj.weight`);
    add(`${blk}.attn_output.weight`, `${hf}.self_attn.o_proj.weight`);
    if (arch === 'qwen3') {
      add(`${blk}.attn_q_norm.weight`, `${hf}.self_attn.q_norm.weight`);
      add(`${blk}.attn_k_norm.weight`, `${hf}.self_attn.k_norm.weight`);
    }
    add(`${blk}.ffn_norm.weight`, `${hf}.post_attention_layernorm.weight`);
    add(`${blk}.ffn_gate.weight`, `${hf}.mlp.gate_proj.weight`);
    add(`${blk}.ffn_up.weight`, `${hf}.mlp.up_proj.weight`);
    add(`${blk}.ffn_down.weight`, `${hf}.mlp.down_proj.weight`);
  }
  add('output_norm.weight', 'model.norm.weight');
  if (!c.tieEmbeddings) add('output.weight', 'lm_head.weight');
  return encodeGguf(m, out);
}
