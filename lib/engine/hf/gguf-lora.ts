import {
  encodeGgufHeader,
  GGML_TYPE,
  GGUF_ALIGNMENT,
  permuteRotaryRows,
  type GgufValue,
  type TensorInfoOut,
} from '../gguf';
import { indexSafetensors, rawToFloat32 } from '../safetensors';
import { parseHfConfig, type HfModelConfig } from './config';
import { GgufExportRefused, projectionShapes } from './gguf-export';
import { collectLoraFactors, parseLoraConfig } from './lora';
import type { LoraModule } from './model';

/**
 * A PEFT LoRA adapter as a llama.cpp LoRA adapter file (what convert_lora_to_gguf.py writes), to apply at run time
 * on the base's GGUF file (lib/engine/hf/gguf-export.ts) instead of merging: `general.type = "adapter"`,
 * `adapter.type = "lora"`, and per adapted projection `<tensor>.lora_a` (PEFT's lora_A, [r, in], so ggml dims
 * [in, r]) and `<tensor>.lora_b` (lora_B, [out, r]) in F32. llama.cpp scales B·A by `adapter.lora.alpha / r`
 * (r read from lora_b), so alpha is written as PEFT's scale × r, which also covers rsLoRA's α/√r. On the `llama`
 * architecture the q/k rows of the base are permuted for llama.cpp's RoPE, and so are lora_b's.
 *
 * Refused (GgufExportRefused): whatever the merging export refuses, and an adapter of the output head (the tiny
 * models tie it to the embedding, which llama.cpp's adapter would have to modify for both uses).
 */
export function exportHfGgufLora(baseConfig: unknown, adapter: { config: unknown; weights: Uint8Array }): Uint8Array {
  let c: HfModelConfig;
  try {
    c = parseHfConfig(baseConfig);
  } catch (err) {
    throw new GgufExportRefused((err as Error).message);
  }
  const arch = c.modelType === 'qwen3' ? 'qwen3' : c.modelType === 'qwen2' ? 'qwen2' : 'llama';
  const shapes = projectionShapes(c);
  const names: Record<LoraModule, string> = {
    q: 'attn_q',
    k: 'attn_k',
    v: 'attn_v',
    o: 'attn_output',
    gate: 'ffn_gate',
    up: 'ffn_up',
    down: 'ffn_down',
  };
  let config;
  let pairs;
  try {
    config = parseLoraConfig(adapter.config);
    const collected = collectLoraFactors(
      { layers: c.layers, vocab: c.vocab, hidden: c.hidden, projectionShape: (_l, m) => shapes[m] },
      config,
      indexSafetensors(adapter.weights).tensors,
    );
    pairs = collected.pairs;
  } catch (err) {
    throw new GgufExportRefused(`its adapter cannot be converted: ${(err as Error).message}`);
  }
  const tensors: { info: TensorInfoOut; data: Float32Array }[] = [];
  let offset = 0;
  const add = (name: string, shape: [number, number], data: Float32Array) => {
    tensors.push({ info: { name, dims: [shape[1], shape[0]], type: GGML_TYPE.F32, offset }, data });
    offset += Math.ceil((data.length * 4) / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
  };
  for (const p of pairs) {
    if (p.target === 'lm_head') throw new GgufExportRefused('its adapter adapts the output head (lm_head)');
    const { layer, module } = p.target;
    const [out, inp] = shapes[module];
    const a = rawToFloat32(p.a);
    let b = rawToFloat32(p.b);
    const r = a.length / inp;
    // llama.cpp scales each pair by alpha / its own rank: one alpha fits only one rank.
    if (r !== config.rank) throw new GgufExportRefused(`its adapter's ranks differ (${r} and ${config.rank})`);
    if (arch === 'llama' && (module === 'q' || module === 'k')) b = permuteRotaryRows(b, out / c.headDim, r);
    const base = `blk.${layer}.${names[module]}.weight`;
    add(`${base}.lora_a`, [r, inp], a);
    add(`${base}.lora_b`, [out, r], b);
  }
  if (tensors.length === 0) throw new GgufExportRefused('its adapter has no LoRA factors');
  const metadata = new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: arch }],
    ['general.type', { type: 'string', value: 'adapter' }],
    ['general.alignment', { type: 'u32', value: GGUF_ALIGNMENT }],
    ['adapter.type', { type: 'string', value: 'lora' }],
    ['adapter.lora.alpha', { type: 'f32', value: config.scale * config.rank }],
  ]);
  const header = encodeGgufHeader(
    metadata,
    tensors.map((t) => t.info),
  );
  const out = new Uint8Array(header.length + offset);
  out.set(header, 0);
  for (const t of tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), header.length + t.info.offset);
  }
  return out;
}
