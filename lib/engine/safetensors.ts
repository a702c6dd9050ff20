import { Model, parseModelConfig, type ModelConfig } from './model';
import type { WasmHeap } from './wasm/heap';

/**
 * safetensors (https://github.com/huggingface/safetensors): u64 little-endian header length, a JSON header
 * {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}} padded with spaces to
 * 8 bytes, then the raw little-endian tensor bytes. Offsets are relative to the data section; the data must
 * be covered exactly, without holes or overlaps (the reference reader rejects anything else).
 */

export type SafetensorsDType = 'F32' | 'F16' | 'BF16' | 'F64';

const DTYPE_BYTES: Record<SafetensorsDType, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export interface DecodedTensor {
  /** The stored dtype; `data` is always converted to float32. */
  dtype: SafetensorsDType;
  shape: number[];
  data: Float32Array;
}

export interface DecodedSafetensors {
  tensors: Map<string, DecodedTensor>;
  metadata: Record<string, string>;
}

// The reference implementation refuses headers above 100 MB; a bound also stops a hostile length.
const MAX_HEADER_BYTES = 100_000_000;

/** Encodes float32 tensors in the given order. */
export function encodeSafetensors(tensors: readonly NamedTensor[], metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  const seen = new Set<string>();
  for (const t of tensors) {
    if (t.name === '__metadata__' || seen.has(t.name))
      throw new Error(`safetensors: invalid or duplicate tensor name ${t.name}`);
    seen.add(t.name);
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (numel !== t.data.length)
      throw new Error(`safetensors: ${t.name} has ${t.data.length} values for shape [${t.shape}]`);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + numel * 4] };
    offset += numel * 4;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) {
    const p = new Uint8Array(padded).fill(0x20);
    p.set(json);
    json = p;
  }
  const out = new Uint8Array(8 + json.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const t of tensors) {
    // Little-endian hosts (every platform Node runs on in practice) can copy the bytes as they are.
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += t.data.byteLength;
  }
  return out;
}

export interface RawTensor {
  dtype: SafetensorsDType;
  shape: number[];
  /** The stored little-endian bytes (a view into the file, not a copy). */
  bytes: Uint8Array;
}

/** A tensor's entry in a safetensors header: byte range [begin, end) relative to the data section. */
export interface SafetensorsEntry {
  dtype: SafetensorsDType;
  shape: number[];
  begin: number;
  end: number;
}

/**
 * Validates a safetensors header (the JSON after the 8-byte length) against the size of the data section that
 * follows it, and lists its tensors. For readers that fetch tensor bytes themselves (a file read a block at a time).
 */
export function parseSafetensorsHeader(
  headerBytes: Uint8Array,
  dataLen: number,
): { entries: Map<string, SafetensorsEntry>; metadata: Record<string, string> } {
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
  } catch {
    throw new Error('safetensors: header is not valid UTF-8 JSON');
  }
  if (!isRecord(header)) throw new Error('safetensors: header is not a JSON object');
  const metadata: Record<string, string> = {};
  const spans: Array<[number, number, string]> = [];
  const entries = new Map<string, SafetensorsEntry>();
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isRecord(entry)) throw new Error('safetensors: __metadata__ must be an object');
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== 'string') throw new Error(`safetensors: metadata value ${k} is not a string`);
        metadata[k] = v;
      }
      continue;
    }
    if (!isRecord(entry)) throw new Error(`safetensors: entry ${name} is not an object`);
    const { dtype, shape, data_offsets: offsets } = entry;
    if (!isSupportedDType(dtype)) throw new Error(`safetensors: ${name} has unsupported dtype ${String(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((d): d is number => Number.isInteger(d) && d >= 0)) {
      throw new Error(`safetensors: ${name} has an invalid shape`);
    }
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o): o is number => Number.isInteger(o) && o >= 0)
    ) {
      throw new Error(`safetensors: ${name} has invalid data_offsets`);
    }
    const dt = dtype;
    const [begin, end] = offsets;
    const numel = shape.reduce((a: number, b: number) => a * b, 1);
    if (end < begin || end > dataLen || end - begin !== numel * DTYPE_BYTES[dt]) {
      throw new Error(`safetensors: ${name} data_offsets [${begin}, ${end}] do not match shape and dtype`);
    }
    spans.push([begin, end, name]);
    entries.set(name, { dtype: dt, shape: [...shape], begin, end });
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let covered = 0;
  for (const [begin, end, name] of spans) {
    if (begin !== covered) throw new Error(`safetensors: data of ${name} overlaps or leaves a hole at byte ${covered}`);
    covered = end;
  }
  if (covered !== dataLen) throw new Error('safetensors: trailing bytes after the last tensor');
  return { entries, metadata };
}

/** The header length a safetensors file's first 8 bytes give, checked against the file size. */
export function safetensorsHeaderLength(first8: Uint8Array, fileSize: number): number {
  if (first8.length < 8 || fileSize < 8) throw new Error('safetensors: file shorter than its header length');
  const headerLen = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  if (headerLen > BigInt(Math.min(MAX_HEADER_BYTES, fileSize - 8)))
    throw new Error('safetensors: header length out of range');
  return Number(headerLen);
}

/** Validates a safetensors file and indexes its tensors without converting them (16-bit weights stay 16-bit). */
export function indexSafetensors(bytes: Uint8Array): {
  tensors: Map<string, RawTensor>;
  metadata: Record<string, string>;
} {
  const n = safetensorsHeaderLength(bytes.subarray(0, 8), bytes.length);
  const dataStart = 8 + n;
  const { entries, metadata } = parseSafetensorsHeader(bytes.subarray(8, dataStart), bytes.length - dataStart);
  const tensors = new Map<string, RawTensor>();
  for (const [name, e] of entries) {
    tensors.set(name, {
      dtype: e.dtype,
      shape: e.shape,
      bytes: bytes.subarray(dataStart + e.begin, dataStart + e.end),
    });
  }
  return { tensors, metadata };
}

export function decodeSafetensors(bytes: Uint8Array): DecodedSafetensors {
  const { tensors: raw, metadata } = indexSafetensors(bytes);
  const tensors = new Map<string, DecodedTensor>();
  for (const [name, t] of raw) tensors.set(name, { dtype: t.dtype, shape: t.shape, data: toFloat32(t.bytes, t.dtype) });
  return { tensors, metadata };
}

/** A raw tensor's values as float32 (a copy). */
export function rawToFloat32(t: RawTensor): Float32Array {
  return toFloat32(t.bytes, t.dtype);
}

function toFloat32(src: Uint8Array, dtype: SafetensorsDType): Float32Array {
  const n = src.length / DTYPE_BYTES[dtype];
  // Copy first: the source offset need not be aligned, and callers may keep the result past the file.
  // A copy (a new Uint8Array, not slice: on a Node Buffer slice is a view of the whole pool).
  const buf = new Uint8Array(src).buffer;
  switch (dtype) {
    case 'F32':
      return new Float32Array(buf);
    case 'F64':
      return Float32Array.from(new Float64Array(buf));
    case 'BF16': {
      const half = new Uint16Array(buf);
      const bits = new Uint32Array(n);
      for (let i = 0; i < n; i++) bits[i] = half[i] << 16;
      return new Float32Array(bits.buffer);
    }
    case 'F16': {
      const half = new Uint16Array(buf);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = f16ToF32(half[i]);
      return out;
    }
  }
}

function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function isSupportedDType(v: unknown): v is SafetensorsDType {
  return typeof v === 'string' && Object.hasOwn(DTYPE_BYTES, v);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Metadata key holding the engine's ModelConfig as JSON. */
export const CONFIG_METADATA_KEY = 'tuneboard.model_config';

/** A model's weights as safetensors; `format: pt` lets HF transformers load the file as a Llama state dict. */
export function encodeModel(model: Model, metadata: Record<string, string> = {}): Uint8Array {
  return encodeSafetensors(model.namedTensors(), {
    format: 'pt',
    ...metadata,
    [CONFIG_METADATA_KEY]: JSON.stringify(model.config),
  });
}

/** Rebuilds a model from encodeModel's output (or any file with the expected names, given a config). */
export function decodeModel(bytes: Uint8Array, options: { config?: ModelConfig; heap?: WasmHeap } = {}): Model {
  const { tensors, metadata } = decodeSafetensors(bytes);
  const stored = metadata[CONFIG_METADATA_KEY];
  const config = options.config ?? (stored ? parseModelConfig(JSON.parse(stored)) : undefined);
  if (!config) throw new Error(`safetensors: no model config given and no ${CONFIG_METADATA_KEY} metadata`);
  const data = new Map<string, Float32Array>();
  for (const [name, t] of tensors) data.set(name, t.data);
  return Model.fromTensors(config, data, options.heap);
}
