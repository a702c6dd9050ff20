import { indexSafetensors, rawToFloat32, type RawTensor } from '../safetensors';
import { LORA_MODULES, type HfModel, type LoraModule } from './model';

/**
 * A PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors, exactly as `save_pretrained`
 * writes them) applied on the fly: each targeted projection adds scale·B·A·x to the base output. The base
 * weights are shared, so any number of checkpoints of one base cost only their low-rank factors (a few MB
 * each) — a sequence picks its adapter through its KV cache.
 *
 * Scale is lora_alpha / r (lora_alpha / √r with use_rslora), folded into B at load time. Configurations
 * that change the computation in ways not implemented here (DoRA, per-module rank or alpha patterns,
 * adapted embeddings or lm_head, modules_to_save, bias training) are refused.
 */

export interface LoraWeights {
  rank: number;
  /** Packed op(B) = Aᵀ [K × r] for the first product. */
  aPacked: number;
  /** Packed op(B) = (scale·B)ᵀ [r × N] for the second. */
  bPacked: number;
}

const MODULE_NAMES: Record<string, LoraModule> = {
  q_proj: 'q',
  k_proj: 'k',
  v_proj: 'v',
  o_proj: 'o',
  gate_proj: 'gate',
  up_proj: 'up',
  down_proj: 'down',
};

const TENSOR_NAME =
  /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.lora_(A|B)(?:\.[^.]+)?\.weight$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): boolean {
  return (Array.isArray(v) && v.length > 0) || (isRecord(v) && Object.keys(v).length > 0);
}

export interface LoraConfigSummary {
  rank: number;
  alpha: number;
  scale: number;
  targetModules: string[];
  baseModel: string | null;
}

/** Checks adapter_config.json and returns what the engine uses of it. */
export function parseLoraConfig(value: unknown): LoraConfigSummary {
  if (!isRecord(value)) throw new Error('adapter_config.json: not a JSON object');
  const v = value;
  if (v.peft_type !== undefined && v.peft_type !== 'LORA') {
    throw new Error(`adapter_config.json: peft_type ${JSON.stringify(v.peft_type)} is not supported (only LORA)`);
  }
  const r = v.r;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1)
    throw new Error('adapter_config.json: r must be a positive integer');
  const alpha = v.lora_alpha ?? r;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha))
    throw new Error('adapter_config.json: lora_alpha must be a number');
  if (v.use_dora === true) throw new Error('adapter_config.json: DoRA (use_dora) is not supported');
  if (nonEmpty(v.rank_pattern) || nonEmpty(v.alpha_pattern)) {
    throw new Error('adapter_config.json: per-module rank_pattern / alpha_pattern are not supported');
  }
  if (nonEmpty(v.modules_to_save)) throw new Error('adapter_config.json: modules_to_save is not supported');
  if (v.bias !== undefined && v.bias !== 'none')
    throw new Error('adapter_config.json: trained biases (bias != "none") are not supported');
  if (v.fan_in_fan_out === true) throw new Error('adapter_config.json: fan_in_fan_out is not supported');
  const targets = Array.isArray(v.target_modules)
    ? v.target_modules.filter((t): t is string => typeof t === 'string')
    : typeof v.target_modules === 'string'
      ? [v.target_modules]
      : [];
  const scale = v.use_rslora === true ? alpha / Math.sqrt(r) : alpha / r;
  return {
    rank: r,
    alpha,
    scale,
    targetModules: targets,
    baseModel: typeof v.base_model_name_or_path === 'string' ? v.base_model_name_or_path : null,
  };
}

export class LoraAdapter {
  readonly config: LoraConfigSummary;
  readonly maxRank: number;
  private readonly layers: Array<Partial<Record<LoraModule, LoraWeights>>>;
  private readonly allocations: number[] = [];
  private released = false;

  private constructor(
    readonly base: HfModel,
    config: LoraConfigSummary,
    tensors: Map<string, RawTensor>,
  ) {
    this.config = config;
    this.layers = Array.from({ length: base.hf.layers }, () => ({}));
    const pairs = new Map<string, { a?: RawTensor; b?: RawTensor; layer: number; module: LoraModule }>();
    for (const [name, t] of tensors) {
      const m = TENSOR_NAME.exec(name);
      if (!m) {
        throw new Error(
          `adapter_model.safetensors: tensor ${name} is not a LoRA factor of a q/k/v/o/gate/up/down projection`,
        );
      }
      const layer = Number(m[1]);
      if (layer >= base.hf.layers)
        throw new Error(`adapter_model.safetensors: ${name} names layer ${layer} of a ${base.hf.layers}-layer model`);
      const proj = MODULE_NAMES[m[3]];
      const key = `${layer}.${proj}`;
      const entry = pairs.get(key) ?? { layer, module: proj };
      if (m[4] === 'A') entry.a = t;
      else entry.b = t;
      pairs.set(key, entry);
    }
    if (pairs.size === 0) throw new Error('adapter_model.safetensors: no LoRA tensors');
    let maxRank = 0;
    const heap = base.heap;
    try {
      for (const { a, b, layer, module } of pairs.values()) {
        if (!a || !b)
          throw new Error(
            `adapter_model.safetensors: layer ${layer} ${module}_proj lacks its lora_${a ? 'B' : 'A'} tensor`,
          );
        const [N, K] = base.projectionShape(layer, module);
        const rank = a.shape[0];
        if (
          a.shape.length !== 2 ||
          a.shape[1] !== K ||
          b.shape.length !== 2 ||
          b.shape[0] !== N ||
          b.shape[1] !== rank
        ) {
          throw new Error(
            `adapter_model.safetensors: layer ${layer} ${module}_proj has A [${a.shape}] and B [${b.shape}], expected [r, ${K}] and [${N}, r]`,
          );
        }
        maxRank = Math.max(maxRank, rank);
        const aData = rawToFloat32(a);
        const bData = rawToFloat32(b);
        for (let i = 0; i < bData.length; i++) bData[i] *= config.scale;
        const aPtr = heap.upload(aData);
        const bPtr = heap.upload(bData);
        try {
          // x·Aᵀ: op(B) = Aᵀ is K × r with element (k, i) = A[i][k]. t·(sB)ᵀ: op(B) is r × N, (i, j) = B[j][i].
          const aPacked = heap.alloc(heap.packedBFloats(K, rank));
          this.allocations.push(aPacked);
          heap.packB(K, rank, aPtr, 1, K, aPacked);
          const bPacked = heap.alloc(heap.packedBFloats(rank, N));
          this.allocations.push(bPacked);
          heap.packB(rank, N, bPtr, 1, rank, bPacked);
          this.layers[layer][module] = { rank, aPacked, bPacked };
        } finally {
          heap.release(aPtr);
          heap.release(bPtr);
        }
      }
    } catch (err) {
      this.release();
      throw err;
    }
    this.maxRank = maxRank;
  }

  /** Loads an adapter for `base` from adapter_config.json's parsed value and adapter_model.safetensors' bytes. */
  static load(base: HfModel, configJson: unknown, safetensors: Uint8Array): LoraAdapter {
    if (base.isReleased) throw new Error('base model was released');
    const config = parseLoraConfig(configJson);
    return new LoraAdapter(base, config, indexSafetensors(safetensors).tensors);
  }

  weights(layer: number, module: LoraModule): LoraWeights | undefined {
    return this.layers[layer]?.[module];
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Heap bytes of the packed factors. */
  get bytes(): number {
    return this.sizeBytes();
  }

  private sizeBytes(): number {
    let n = 0;
    this.layers.forEach((l, layer) => {
      for (const m of LORA_MODULES) {
        const w = l[m];
        if (!w) continue;
        const [N, K] = this.base.projectionShape(layer, m);
        n += (this.base.heap.packedBFloats(K, w.rank) + this.base.heap.packedBFloats(w.rank, N)) * 4;
      }
    });
    return n;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const ptr of this.allocations) this.base.heap.release(ptr);
    this.allocations.length = 0;
  }
}
