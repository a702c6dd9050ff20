import { indexSafetensors, rawToFloat32, type RawTensor } from '../safetensors';
import { LORA_MODULES, type HfModel, type LoraModule } from './model';

/**
 * A PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors, exactly as `save_pretrained`
 * writes them) applied on the fly: each targeted projection adds scale·B·A·x to the base output, and an
 * adapted output head (`lm_head`, what Tinker's `train_unembed` trains) adds scale·B·A·h to the logits. The
 * base weights are shared, so any number of checkpoints of one base cost only their low-rank factors (a few
 * MB each; the head's B is vocab × r, ~19 MB at Qwen3's vocabulary and r = 32) — a sequence picks its adapter
 * through its KV cache.
 *
 * With tied embeddings PEFT wraps lm_head around the shared matrix and adds its delta to the logits only;
 * the input embedding stays the base's, and so it does here. Scale is lora_alpha / r (lora_alpha / √r with
 * use_rslora), folded into B at load time. Configurations that change the computation in ways not
 * implemented here (DoRA, per-module rank or alpha patterns, an adapted input embedding, a replaced output
 * head, modules_to_save, bias training) are refused.
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

// PEFT's names, with its optional adapter-name infix (`lora_A.<adapter>.weight`).
const PROJECTION_FACTOR =
  /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.lora_(A|B)(?:\.[^.]+)?\.weight$/;
const HEAD_FACTOR = /^base_model\.model\.lm_head\.lora_(A|B)(?:\.[^.]+)?\.weight$/;
/**
 * PEFT's copy of the frozen output head: save_pretrained writes it whenever lm_head is targeted
 * (`save_embedding_layers` turns itself on), and loading puts it back into the model's head.
 */
const HEAD_COPY = 'base_model.model.lm_head.base_layer.weight';
const INPUT_EMBEDDING = /^base_model\.model\.model\.embed_tokens\./;

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
  /** Whether PEFT would wrap the output head (module `lm_head`) with this config. */
  targetsLmHead: boolean;
  baseModel: string | null;
}

/**
 * PEFT's check_target_module_exists for a module named `key` at the top of the model (no dots, so a list
 * entry matches only by equality): excluded by exclude_modules, else a string target_modules is a regex that
 * must match the whole name and a list must contain it ("all-linear" never takes the output layer).
 */
function peftTargets(targets: unknown, exclude: unknown, key: string): boolean {
  const matches = (spec: unknown): boolean => {
    if (Array.isArray(spec)) return spec.includes(key);
    if (typeof spec !== 'string' || spec === 'all-linear') return false;
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${spec})$`);
    } catch {
      throw new Error(
        `adapter_config.json: target_modules/exclude_modules ${JSON.stringify(spec)} is not a regex this engine can read`,
      );
    }
    return re.test(key);
  };
  return !matches(exclude) && matches(targets);
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
    targetsLmHead: peftTargets(v.target_modules, v.exclude_modules, 'lm_head'),
    baseModel: typeof v.base_model_name_or_path === 'string' ? v.base_model_name_or_path : null,
  };
}

/**
 * Whether two [rows × cols] tensors hold the same values once widened to float32 (stored dtypes may differ:
 * a bf16 base, an f32 copy), a block of rows at a time so a vocabulary-sized head is never copied whole.
 */
function sameValues(x: RawTensor, y: RawTensor): boolean {
  const [rows, cols] = x.shape;
  const block = Math.max(1, Math.floor(65536 / cols));
  const slice = (t: RawTensor, r0: number, n: number): RawTensor => {
    const rowBytes = t.bytes.length / rows;
    return { dtype: t.dtype, shape: [n, cols], bytes: t.bytes.subarray(r0 * rowBytes, (r0 + n) * rowBytes) };
  };
  for (let r0 = 0; r0 < rows; r0 += block) {
    const n = Math.min(block, rows - r0);
    const a = rawToFloat32(slice(x, r0, n));
    const b = rawToFloat32(slice(y, r0, n));
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  }
  return true;
}

/**
 * PEFT loads its copy of the output head (HEAD_COPY) over the model's, so the adapter computes what PEFT does
 * only when the copy is the base's head itself (it is, unless the adapter was trained on another base or a
 * resized vocabulary; with tied embeddings a different copy would replace the input embedding too).
 */
function checkHeadCopy(base: HfModel, copy: RawTensor): void {
  const head = base.outputHead();
  const [V, h] = head.shape;
  if (copy.shape.length !== 2 || copy.shape[0] !== V || copy.shape[1] !== h) {
    throw new Error(
      `adapter_model.safetensors: ${HEAD_COPY} has shape [${copy.shape}] where this base model's output head is [${V}, ${h}] (an adapter of another base model?)`,
    );
  }
  if (!sameValues(copy, head)) {
    throw new Error(
      `adapter_model.safetensors: ${HEAD_COPY} (PEFT's copy of the output head) differs from this base model's head; an adapter that replaces the head is not supported`,
    );
  }
}

/** The base matrix a pair of factors adapts: a layer's projection, or the output head. */
export type LoraTarget = { layer: number; module: LoraModule } | 'lm_head';

/** What collectLoraFactors needs to know of the base model. */
export interface LoraBaseShape {
  layers: number;
  vocab: number;
  hidden: number;
  /** [out, in] of a layer's projection. */
  projectionShape(layer: number, module: LoraModule): [number, number];
}

export interface LoraFactorPair {
  target: LoraTarget;
  /** [r × K]. */
  a: RawTensor;
  /** [N × r]; scale is not folded in. */
  b: RawTensor;
  /** The base matrix's [N, K]. */
  shape: [number, number];
}

/**
 * The adapter's factor pairs, every name and shape checked against the base model (shared by serving, which packs
 * them, and by the merged GGUF export, which adds scale·B·A to the base weights), and PEFT's copy of the frozen
 * output head when the file has one (the caller checks it against the base's head).
 */
export function collectLoraFactors(
  base: LoraBaseShape,
  config: LoraConfigSummary,
  tensors: Map<string, RawTensor>,
): { pairs: LoraFactorPair[]; headCopy: RawTensor | null } {
  const pairs = new Map<string, { a?: RawTensor; b?: RawTensor; target: LoraTarget }>();
  let headCopy: RawTensor | null = null;
  // First, as the root cause: with ensure_weight_tying PEFT also writes lm_head factors (tied to these)
  // under a config whose target_modules no longer names lm_head.
  const embedding = [...tensors.keys()].find((name) => INPUT_EMBEDDING.test(name));
  if (embedding) {
    throw new Error(
      `adapter_model.safetensors: ${embedding} adapts the input embedding (target_modules embed_tokens, or lm_head with ensure_weight_tying on tied embeddings), which is not supported`,
    );
  }
  for (const [name, t] of tensors) {
    let target: LoraTarget;
    let factor: string;
    const proj = PROJECTION_FACTOR.exec(name);
    const head = HEAD_FACTOR.exec(name);
    if (proj) {
      const layer = Number(proj[1]);
      if (layer >= base.layers)
        throw new Error(`adapter_model.safetensors: ${name} names layer ${layer} of a ${base.layers}-layer model`);
      target = { layer, module: MODULE_NAMES[proj[3]] };
      factor = proj[4];
    } else if (head) {
      // PEFT builds the model from the config and ignores tensors of modules it did not wrap: applying
      // them would differ from PEFT, dropping them silently would lose what was trained.
      if (!config.targetsLmHead) {
        throw new Error(
          `adapter_model.safetensors: ${name} adapts lm_head but adapter_config.json's target_modules does not (PEFT would load the adapter without it)`,
        );
      }
      target = 'lm_head';
      factor = head[1];
    } else if (name === HEAD_COPY) {
      headCopy = t;
      continue;
    } else {
      throw new Error(
        `adapter_model.safetensors: tensor ${name} is not a LoRA factor of a q/k/v/o/gate/up/down projection or of lm_head`,
      );
    }
    const key = target === 'lm_head' ? target : `${target.layer}.${target.module}`;
    const entry = pairs.get(key) ?? { target };
    if (factor === 'A') entry.a = t;
    else entry.b = t;
    pairs.set(key, entry);
  }
  if (pairs.size === 0) throw new Error('adapter_model.safetensors: no LoRA tensors');
  const r = config.rank;
  const out: LoraFactorPair[] = [];
  for (const { a, b, target } of pairs.values()) {
    const label = target === 'lm_head' ? 'lm_head' : `layer ${target.layer} ${target.module}_proj`;
    if (!a || !b) throw new Error(`adapter_model.safetensors: ${label} lacks its lora_${a ? 'B' : 'A'} tensor`);
    const [N, K] = target === 'lm_head' ? [base.vocab, base.hidden] : base.projectionShape(target.layer, target.module);
    if (
      a.shape.length !== 2 ||
      a.shape[0] !== r ||
      a.shape[1] !== K ||
      b.shape.length !== 2 ||
      b.shape[0] !== N ||
      b.shape[1] !== r
    ) {
      throw new Error(
        `adapter_model.safetensors: ${label} has A [${a.shape}] and B [${b.shape}], expected [${r}, ${K}] and [${N}, ${r}] (r = ${r} in adapter_config.json)`,
      );
    }
    out.push({ target, a, b, shape: [N, K] });
  }
  return { pairs: out, headCopy };
}

export class LoraAdapter {
  readonly config: LoraConfigSummary;
  /** Rank of every factor: r (per-module ranks are refused, shapes are checked); sizes the forward pass's temporary. */
  readonly maxRank: number;
  /** The output head's factors (N = vocab, K = hidden), or null when the adapter leaves the head alone. */
  readonly head: LoraWeights | null;
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
    const { pairs, headCopy } = collectLoraFactors(
      {
        layers: base.hf.layers,
        vocab: base.hf.vocab,
        hidden: base.hf.hidden,
        projectionShape: (layer, module) => base.projectionShape(layer, module),
      },
      config,
      tensors,
    );
    if (headCopy) checkHeadCopy(base, headCopy);
    let headWeights: LoraWeights | null = null;
    try {
      for (const { a, b, target, shape } of pairs) {
        const w = this.pack(a, b, shape[0], shape[1]);
        if (target === 'lm_head') headWeights = w;
        else this.layers[target.layer][target.module] = w;
      }
    } catch (err) {
      this.release();
      throw err;
    }
    this.head = headWeights;
    this.maxRank = config.rank;
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
    const heap = this.base.heap;
    const r = this.config.rank;
    const factors = (N: number, K: number) => (heap.packedBFloats(K, r) + heap.packedBFloats(r, N)) * 4;
    let n = this.head ? factors(this.base.hf.vocab, this.base.hf.hidden) : 0;
    this.layers.forEach((l, layer) => {
      for (const m of LORA_MODULES) if (l[m]) n += factors(...this.base.projectionShape(layer, m));
    });
    return n;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const ptr of this.allocations) this.base.heap.release(ptr);
    this.allocations.length = 0;
  }

  /** A [r × K] and B [N × r] as packed operands of out += (x·Aᵀ)·(scale·B)ᵀ. */
  private pack(a: RawTensor, b: RawTensor, N: number, K: number): LoraWeights {
    const heap = this.base.heap;
    const rank = a.shape[0];
    const aData = rawToFloat32(a);
    const bData = rawToFloat32(b);
    for (let i = 0; i < bData.length; i++) bData[i] *= this.config.scale;
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
      return { rank, aPacked, bPacked };
    } finally {
      heap.release(aPtr);
      heap.release(bPtr);
    }
  }
}
