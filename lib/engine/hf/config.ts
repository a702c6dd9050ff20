/**
 * Hugging Face `config.json` of the Llama family (Llama 3.x, Qwen2.5, Qwen3, SmolLM2, anything else in
 * LlamaForCausalLM's layout), checked and reduced to what the forward pass needs. Anything that would
 * change the computation and is not implemented is refused with a message naming it, never ignored.
 */

export type RopeScaling =
  | { type: 'default' }
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositionEmbeddings: number;
    };

export interface HfModelConfig {
  modelType: string;
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  /** max_position_embeddings. */
  ctx: number;
  ropeTheta: number;
  ropeScaling: RopeScaling;
  normEps: number;
  tieEmbeddings: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

const SUPPORTED_TYPES = new Set(['llama', 'qwen2', 'qwen3', 'mistral']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function ids(v: unknown): number[] {
  if (Number.isInteger(v)) return [v as number];
  if (Array.isArray(v)) return v.filter((x): x is number => Number.isInteger(x));
  return [];
}

export function parseHfConfig(value: unknown): HfModelConfig {
  if (!isRecord(value)) throw new Error('config.json: not a JSON object');
  const v = value;
  const modelType = typeof v.model_type === 'string' ? v.model_type : '';
  if (!SUPPORTED_TYPES.has(modelType)) {
    throw new Error(
      `config.json: model_type ${JSON.stringify(v.model_type)} is not supported (supported: ${[...SUPPORTED_TYPES].join(', ')})`,
    );
  }
  const int = (key: string, fallback?: number): number => {
    const x = v[key] ?? fallback;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 1)
      throw new Error(`config.json: ${key} must be a positive integer`);
    return x;
  };
  const hidden = int('hidden_size');
  const heads = int('num_attention_heads');
  const kvHeads = int('num_key_value_heads', heads);
  const headDim = int('head_dim', Math.floor(hidden / heads));
  if (heads % kvHeads !== 0)
    throw new Error('config.json: num_attention_heads must be a multiple of num_key_value_heads');
  if (headDim % 2 !== 0) throw new Error('config.json: head_dim must be even (RoPE rotates pairs)');
  const act = v.hidden_act ?? v.hidden_activation ?? 'silu';
  if (act !== 'silu') throw new Error(`config.json: hidden_act ${JSON.stringify(act)} is not supported (only silu)`);
  if (v.mlp_bias === true) throw new Error('config.json: mlp_bias is not supported');
  if (v.use_sliding_window === true || (modelType === 'mistral' && Number.isInteger(v.sliding_window))) {
    throw new Error('config.json: sliding-window attention is not supported');
  }
  const eps = v.rms_norm_eps ?? 1e-6;
  if (typeof eps !== 'number' || !(eps > 0)) throw new Error('config.json: rms_norm_eps must be a positive number');

  // transformers ≥ 5 writes rope_parameters (theta inside); 4.x wrote rope_theta + rope_scaling.
  const params = isRecord(v.rope_parameters) ? v.rope_parameters : isRecord(v.rope_scaling) ? v.rope_scaling : null;
  const theta = (params && typeof params.rope_theta === 'number' ? params.rope_theta : v.rope_theta) ?? 10000;
  if (typeof theta !== 'number' || !(theta > 0)) throw new Error('config.json: rope_theta must be a positive number');
  const ropeType = params ? (params.rope_type ?? params.type ?? 'default') : 'default';
  let ropeScaling: RopeScaling;
  const num = (key: string): number => {
    const x = params?.[key];
    if (typeof x !== 'number' || !(x > 0)) throw new Error(`config.json: rope ${key} must be a positive number`);
    return x;
  };
  if (ropeType === 'default') ropeScaling = { type: 'default' };
  else if (ropeType === 'linear') ropeScaling = { type: 'linear', factor: num('factor') };
  else if (ropeType === 'llama3') {
    ropeScaling = {
      type: 'llama3',
      factor: num('factor'),
      lowFreqFactor: num('low_freq_factor'),
      highFreqFactor: num('high_freq_factor'),
      originalMaxPositionEmbeddings: num('original_max_position_embeddings'),
    };
  } else
    throw new Error(`config.json: rope type ${JSON.stringify(ropeType)} is not supported (default, linear, llama3)`);

  return {
    modelType,
    vocab: int('vocab_size'),
    hidden,
    layers: int('num_hidden_layers'),
    heads,
    kvHeads,
    headDim,
    intermediate: int('intermediate_size'),
    ctx: int('max_position_embeddings', 2048),
    ropeTheta: theta,
    ropeScaling,
    normEps: eps,
    tieEmbeddings: v.tie_word_embeddings === true,
    bosTokenId: Number.isInteger(v.bos_token_id) ? (v.bos_token_id as number) : null,
    eosTokenIds: ids(v.eos_token_id),
  };
}

/**
 * RoPE inverse frequencies as transformers computes them (float32 `base ** (arange(0, d, 2) / d)`, then
 * the scaling rule), so angles match its tables to the last bit that matters.
 */
export function ropeInvFreq(c: HfModelConfig): Float32Array {
  const half = c.headDim / 2;
  const inv = new Float32Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / Math.fround(Math.pow(c.ropeTheta, Math.fround((2 * i) / c.headDim)));
  const s = c.ropeScaling;
  if (s.type === 'linear') for (let i = 0; i < half; i++) inv[i] = inv[i] / s.factor;
  if (s.type === 'llama3') {
    const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
    const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
    for (let i = 0; i < half; i++) {
      const f = inv[i];
      const wavelen = (2 * Math.PI) / f;
      let out = wavelen > lowWavelen ? f / s.factor : f;
      if (!(wavelen < highWavelen) && !(wavelen > lowWavelen)) {
        const smooth =
          (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        out = (1 - smooth) * (out / s.factor) + smooth * out;
      }
      inv[i] = out;
    }
  }
  return inv;
}

/** generation_config.json's (or config.json's) `eos_token_id`, one id or a list, as ids; [] when it has none. */
export function eosIds(v: unknown): number[] {
  const o = v && typeof v === 'object' ? (v as { eos_token_id?: unknown }).eos_token_id : undefined;
  if (Number.isInteger(o)) return [o as number];
  if (Array.isArray(o)) return o.filter((x): x is number => Number.isInteger(x));
  return [];
}
