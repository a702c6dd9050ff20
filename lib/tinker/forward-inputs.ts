import { ApiError } from '@/lib/errors';
import { MAX_TOKEN_ID } from '@/lib/schemas/tinker';
import { elementCount, int64Base64, toBase64 } from './tensors';
import { LOSS_FNS, type ForwardDatum, type ForwardPayload, type LossFn, type WireTensor } from './types';

/**
 * What a forward / forward_backward request must hold for the worker to compute its loss (docs/tinker.md §2.4),
 * checked the same way whichever wire it came over (lib/tinker/forward-request.ts decodes both into RawDatum):
 * every refusal is a 400 naming the datum and the field. What passes is the worker's payload, in the form of
 * docs/tinker.md §3.1: dense tensors, token ids int32, targets int64, the other inputs float32.
 */

/** Most datums in one request. The SDK sends at most `fwdbwd_max_chunk_len` (1024 by default) per request. */
export const MAX_DATUMS_PER_REQUEST = 4096;
/** Most input tokens in one request: the SDK splits a call into requests of about 5 MB, far fewer tokens. */
export const MAX_TOKENS_PER_REQUEST = 1 << 20;
/**
 * Most loss input elements in one request, counted dense (a sparse CSR tensor counts its full shape): 8 Mi elements,
 * at most 64 MiB of int64 targets, before base64. Bounds what densifying a tiny sparse tensor can allocate.
 */
export const MAX_INPUT_ELEMENTS_PER_REQUEST = 1 << 23;
/** Most keys in loss_fn_config. */
export const MAX_LOSS_FN_CONFIG_KEYS = 64;

/**
 * The loss_fn_config keys each loss takes (docs/tinker.md §2.4); the worker holds their defaults
 * (workers/python/tuneboard_worker/tinker/losses.py). Checked here too, so that a misspelt key is a 400 of the
 * submission rather than a failed future.
 */
const CONFIG_KEYS: Record<LossFn, readonly string[]> = {
  cross_entropy: [],
  importance_sampling: [],
  ppo: ['clip_low_threshold', 'clip_high_threshold'],
  cispo: ['clip_low_threshold', 'clip_high_threshold'],
  dro: ['beta'],
};

/** The inputs a loss reads (docs/tinker.md §2.4); the SDK knows these six names and their dtypes. */
const INPUT_DTYPES = {
  target_tokens: 'int64',
  weights: 'float32',
  logprobs: 'float32',
  advantages: 'float32',
  clip_low_threshold: 'float32',
  clip_high_threshold: 'float32',
} as const;
type InputName = keyof typeof INPUT_DTYPES;
const INPUT_NAMES = Object.keys(INPUT_DTYPES) as InputName[];

const RL_REQUIRED: readonly InputName[] = ['target_tokens', 'logprobs', 'advantages'];
const REQUIRED: Record<LossFn, readonly InputName[]> = {
  cross_entropy: ['target_tokens'],
  importance_sampling: RL_REQUIRED,
  ppo: RL_REQUIRED,
  cispo: RL_REQUIRED,
  dro: RL_REQUIRED,
};

/** A loss input as a wire gave it, not yet checked. */
export interface RawTensor {
  dtype: 'float32' | 'int64';
  /** null: not given (1-D). */
  shape: number[] | null;
  /** Dense values, or a sparse tensor's non-zero values; int64 as numbers (beyond 2^53 approximate: refused). */
  values: Float32Array | Float64Array;
  /** CSR row pointers and column indices when the tensor is sparse. */
  sparse: { crow: Float64Array; col: Float64Array } | null;
}

/** One datum as a wire gave it: the model input's token ids (text chunks concatenated) and the loss inputs. */
export interface RawDatum {
  tokens: Int32Array;
  inputs: Map<string, RawTensor>;
}

function badRequest(message: string): ApiError {
  return new ApiError('bad_request', message);
}

/** A shape for a message: a hostile one may have a million dimensions. */
function shapeText(shape: readonly number[]): string {
  return shape.length <= 8
    ? `[${shape.join(', ')}]`
    : `[${shape.slice(0, 4).join(', ')}, … ${shape.length} dimensions]`;
}

/** `name[i]` or `name[t, k]` for the flat index i of a tensor of this shape. */
function at(name: string, shape: readonly number[], i: number): string {
  return shape.length === 2 ? `${name}[${Math.floor(i / shape[1])}, ${i % shape[1]}]` : `${name}[${i}]`;
}

/**
 * Checks a forward / forward_backward request and returns the worker's payload. `lossFn` and `config` are as the
 * client sent them (config: null or empty when none).
 */
export function checkForward(lossFn: string, config: Map<string, number> | null, data: RawDatum[]): ForwardPayload {
  if (!(LOSS_FNS as readonly string[]).includes(lossFn))
    throw badRequest(
      lossFn === ''
        ? `loss_fn is missing: give one of ${LOSS_FNS.join(', ')}`
        : `unknown loss_fn '${lossFn.slice(0, 100)}': this server computes ${LOSS_FNS.join(', ')}`,
    );
  const loss = lossFn as LossFn;
  if (data.length === 0) throw badRequest('data is empty: send at least one datum');
  if (data.length > MAX_DATUMS_PER_REQUEST)
    throw badRequest(
      `${data.length} datums in one request; at most ${MAX_DATUMS_PER_REQUEST} are accepted (the SDK splits ` +
        'larger calls into requests of fwdbwd_max_chunk_len datums)',
    );
  const budget = { tokens: MAX_TOKENS_PER_REQUEST, elements: MAX_INPUT_ELEMENTS_PER_REQUEST };
  return {
    loss_fn: loss,
    loss_fn_config: checkConfig(loss, config),
    data: data.map((datum, i) => checkDatum(loss, datum, `datum ${i}`, budget)),
  };
}

function checkConfig(loss: LossFn, config: Map<string, number> | null): Record<string, number> | null {
  if (config === null || config.size === 0) return null;
  if (config.size > MAX_LOSS_FN_CONFIG_KEYS)
    throw badRequest(`loss_fn_config has ${config.size} keys; at most ${MAX_LOSS_FN_CONFIG_KEYS} are accepted`);
  const accepted = CONFIG_KEYS[loss];
  const unknown = [...config.keys()].filter((key) => !accepted.includes(key));
  if (unknown.length > 0)
    throw badRequest(
      `loss_fn_config keys ${unknown.map((k) => `'${k.slice(0, 100)}'`).join(', ')} do not apply to ${loss} ` +
        `(it takes: ${accepted.join(', ') || 'none'})`,
    );
  for (const [key, value] of config)
    if (!Number.isFinite(value)) throw badRequest(`loss_fn_config.${key} is ${value}; it must be a finite number`);
  const low = config.get('clip_low_threshold');
  const high = config.get('clip_high_threshold');
  // Only when both are given: the other's default is the worker's (ppo 0.8/1.2, cispo 0/4), which it checks.
  if (low !== undefined && high !== undefined && low > high)
    throw badRequest(`loss_fn_config clip_low_threshold (${low}) is above clip_high_threshold (${high})`);
  return Object.fromEntries(config);
}

interface Budget {
  tokens: number;
  elements: number;
}

function checkDatum(loss: LossFn, datum: RawDatum, where: string, budget: Budget): ForwardDatum {
  const { tokens, inputs } = datum;
  const n = tokens.length;
  if (n === 0) throw badRequest(`${where}: model_input has no tokens`);
  budget.tokens -= n;
  if (budget.tokens < 0)
    throw badRequest(`the request has more than ${MAX_TOKENS_PER_REQUEST} input tokens; send fewer datums per request`);
  for (let t = 0; t < n; t++)
    if (tokens[t] < 0) throw badRequest(`${where}: model_input token ${t} is ${tokens[t]}, not a token id`);

  for (const name of inputs.keys())
    if (!(name in INPUT_DTYPES))
      throw badRequest(
        `${where}: unknown loss_fn_inputs '${name.slice(0, 100)}'; the inputs are ${INPUT_NAMES.join(', ')}`,
      );
  for (const name of REQUIRED[loss])
    if (!inputs.has(name))
      throw badRequest(`${where}: loss_fn_inputs.${name} is missing; ${loss} needs ${REQUIRED[loss].join(', ')}`);

  // target_tokens first: every other input must have its shape (docs/tinker.md §2.4: (N,) or, for
  // cross_entropy, (N, K)).
  const target = dense(where, 'target_tokens', inputs.get('target_tokens') as RawTensor, budget);
  if (target.shape.length === 2 && loss !== 'cross_entropy')
    throw badRequest(
      `${where}: loss_fn_inputs.target_tokens has shape ${shapeText(target.shape)}; only cross_entropy takes ` +
        `K targets per position, ${loss} needs shape [${n}]`,
    );
  if (target.shape[0] !== n)
    throw badRequest(
      `${where}: loss_fn_inputs.target_tokens has shape ${shapeText(target.shape)}; its first dimension must be ` +
        `the datum's ${n} input tokens`,
    );
  if (target.shape.length === 2 && target.shape[1] === 0)
    throw badRequest(
      `${where}: loss_fn_inputs.target_tokens has shape ${shapeText(target.shape)}; K must be 1 or more`,
    );
  for (let i = 0; i < target.values.length; i++) {
    const v = target.values[i];
    if (!Number.isInteger(v) || v < 0 || v > MAX_TOKEN_ID)
      throw badRequest(
        `${where}: loss_fn_inputs.${at('target_tokens', target.shape, i)} is ${v}, not a token id (0 ≤ id < 2^31)`,
      );
  }

  const out: Record<string, WireTensor> = {
    target_tokens: { dtype: 'int64', shape: target.shape, data: int64Base64(target.values) },
  };
  for (const [name, raw] of inputs) {
    if (name === 'target_tokens') continue;
    const tensor = dense(where, name, raw, budget);
    if (tensor.shape.length !== target.shape.length || tensor.shape.some((d, i) => d !== target.shape[i]))
      throw badRequest(
        `${where}: loss_fn_inputs.${name} has shape ${shapeText(tensor.shape)}; it must match target_tokens' ` +
          `shape ${shapeText(target.shape)}`,
      );
    // Float inputs must be finite (docs/tinker.md §2.4): a NaN or ±inf weight, advantage or sampler logprob makes
    // the loss and every gradient of the training client NaN, for all later steps too.
    const values = tensor.values as Float32Array;
    for (let i = 0; i < values.length; i++)
      if (!Number.isFinite(values[i]))
        throw badRequest(
          `${where}: loss_fn_inputs.${at(name, tensor.shape, i)} is ${values[i]}; inputs must be finite float32 values`,
        );
    out[name] = { dtype: 'float32', shape: tensor.shape, data: toBase64(values) };
  }
  return { tokens: { dtype: 'int32', shape: [n], data: toBase64(tokens) }, loss_fn_inputs: out };
}

/** A loss input's dtype and shape checked, made dense (the budget is charged before anything is allocated). */
function dense(
  where: string,
  name: string,
  raw: RawTensor,
  budget: Budget,
): { shape: number[]; values: Float32Array | Float64Array } {
  const field = `${where}: loss_fn_inputs.${name}`;
  const dtype = INPUT_DTYPES[name as InputName];
  if (raw.dtype !== dtype) throw badRequest(`${field} has dtype ${raw.dtype}; it must be ${dtype}`);
  const shape = raw.shape ?? (raw.sparse ? null : [raw.values.length]);
  if (shape === null) throw badRequest(`${field} is sparse (CSR) without a shape; a sparse tensor needs its shape`);
  if (shape.length < 1 || shape.length > 2)
    throw badRequest(`${field} has shape ${shapeText(shape)}; inputs have 1 dimension, or 2 for (N, K) targets`);
  const count = elementCount(shape, MAX_INPUT_ELEMENTS_PER_REQUEST);
  if (count === null || count > budget.elements)
    throw badRequest(
      `${field} has shape ${shapeText(shape)}: the request's inputs may hold at most ` +
        `${MAX_INPUT_ELEMENTS_PER_REQUEST} elements in all`,
    );
  budget.elements -= count;
  if (raw.sparse) return { shape, values: densify(field, shape, raw.values, raw.sparse) };
  if (count !== raw.values.length)
    throw badRequest(`${field} has ${raw.values.length} values, but its shape ${shapeText(shape)} needs ${count}`);
  return { shape, values: raw.values };
}

/**
 * A sparse CSR tensor (what the SDK makes of 2-D torch target_tokens and weights) as a dense array, after checking
 * it is a well-formed CSR of its shape: rows + 1 row pointers from 0, non-decreasing, to nnz; column indices inside
 * the shape and strictly increasing within a row (as torch's to_sparse_csr writes them); nnz values.
 */
function densify(
  field: string,
  shape: number[],
  values: Float32Array | Float64Array,
  { crow, col }: { crow: Float64Array; col: Float64Array },
): Float32Array | Float64Array {
  if (shape.length !== 2)
    throw badRequest(`${field} is sparse (CSR) with shape ${shapeText(shape)}; sparse inputs are 2-D`);
  const [rows, cols] = shape;
  const nnz = values.length;
  if (crow.length !== rows + 1)
    throw badRequest(
      `${field}: sparse_crow_indices has ${crow.length} entries; shape ${shapeText(shape)} needs ${rows + 1}`,
    );
  if (col.length !== nnz)
    throw badRequest(`${field}: sparse_col_indices has ${col.length} entries for ${nnz} values; they must agree`);
  if (crow[0] !== 0 || crow[rows] !== nnz)
    throw badRequest(`${field}: sparse_crow_indices must start at 0 and end at the number of values (${nnz})`);
  const out = values instanceof Float32Array ? new Float32Array(rows * cols) : new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const start = crow[r];
    const end = crow[r + 1];
    if (!Number.isInteger(end) || end < start || end > nnz)
      throw badRequest(`${field}: sparse_crow_indices must be non-decreasing integers (entry ${r + 1} is ${end})`);
    for (let j = start; j < end; j++) {
      const c = col[j];
      if (!Number.isInteger(c) || c < 0 || c >= cols)
        throw badRequest(`${field}: sparse_col_indices[${j}] is ${c}, outside the shape's ${cols} columns`);
      if (j > start && c <= col[j - 1])
        throw badRequest(`${field}: sparse_col_indices of row ${r} must be strictly increasing`);
      out[r * cols + c] = values[j];
    }
  }
  return out;
}
