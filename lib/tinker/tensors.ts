import { ApiError } from '@/lib/errors';
import type { TensorDtype, WireTensor } from './types';

/**
 * The internal tensor form (docs/tinker.md §3.1: little-endian row-major bytes, base64) to and from typed arrays,
 * and the JSON text of float32 values. Typed arrays are used as the wire bytes themselves, which holds on
 * little-endian hosts only (every platform Node ships for but s390x); the module refuses to load elsewhere rather
 * than write byte-swapped tensors.
 */
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
  throw new Error('lib/tinker needs a little-endian host: its typed arrays are the wire bytes');

const ITEM_BYTES: Record<TensorDtype, number> = { float32: 4, int64: 8, int32: 4 };

/** The typed array a WireTensor's values are read into: int64 values as numbers (exact up to 2^53). */
export type TensorValues = Float32Array | Int32Array | Float64Array;

/** The base64 of a typed array's bytes. */
export function toBase64(values: ArrayBufferView): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/**
 * `bytes` itself when its offset suits `align`-byte elements, else an aligned copy. `new Uint8Array(bytes)` copies;
 * `bytes.slice()` would not when `bytes` is a Node Buffer (request bodies are), whose slice is a view.
 */
function aligned(bytes: Uint8Array, align: number): Uint8Array {
  return bytes.byteOffset % align === 0 ? bytes : new Uint8Array(bytes);
}

/** A view of little-endian float32 bytes (copied only when misaligned). */
export function float32s(bytes: Uint8Array): Float32Array {
  const a = aligned(bytes, 4);
  return new Float32Array(a.buffer, a.byteOffset, a.length >> 2);
}

/** A view of little-endian int32 bytes (copied only when misaligned). */
export function int32s(bytes: Uint8Array): Int32Array {
  const a = aligned(bytes, 4);
  return new Int32Array(a.buffer, a.byteOffset, a.length >> 2);
}

/**
 * Little-endian int64 bytes as numbers: exact within ±2^53, beyond it the nearest double (callers that need exact
 * values range-check them, and every range they check is far below 2^53).
 */
export function int64sAsNumbers(bytes: Uint8Array): Float64Array {
  const words = int32s(bytes);
  const out = new Float64Array(words.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = words[2 * i + 1] * 4294967296 + (words[2 * i] >>> 0);
  return out;
}

/** int64 little-endian bytes of integers in [−2^31, 2^31) (token ids), as base64. */
export function int64Base64(values: ArrayLike<number>): string {
  const words = new Int32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    words[2 * i] = v;
    words[2 * i + 1] = v < 0 ? -1 : 0;
  }
  return toBase64(words);
}

/** Elements of a shape: null when an entry is not a non-negative safe integer or the product passes `max`. */
export function elementCount(shape: readonly number[], max = Number.MAX_SAFE_INTEGER): number | null {
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) return null;
    n *= d;
    if (n > max) return null;
  }
  return n;
}

/** A WireTensor of a typed array (Float32Array → float32, Int32Array → int32); `shape` must fit its length. */
export function wireTensorFromArray(values: Float32Array | Int32Array, shape: number[]): WireTensor {
  if (elementCount(shape) !== values.length)
    throw new ApiError('internal', `tensor shape [${shape.join(', ')}] does not fit its ${values.length} values`);
  return { dtype: values instanceof Float32Array ? 'float32' : 'int32', shape, data: toBase64(values) };
}

/**
 * The bytes of a WireTensor that some other process wrote (a worker's result), checked against its dtype and shape:
 * anything inconsistent is our own fault, a 500 naming `what`.
 */
export function wireTensorBytes(tensor: WireTensor, what: string): Uint8Array {
  const bad = (why: string) => new ApiError('internal', `${what} is not a valid tensor: ${why}`);
  const itemBytes = (ITEM_BYTES as Record<string, number | undefined>)[tensor.dtype];
  if (itemBytes === undefined) throw bad(`unknown dtype '${String(tensor.dtype)}'`);
  if (!Array.isArray(tensor.shape) || tensor.shape.length === 0)
    throw bad('it needs a shape of at least one dimension');
  const count = elementCount(tensor.shape);
  if (count === null) throw bad(`shape [${tensor.shape.join(', ')}] is not a list of sizes`);
  if (typeof tensor.data !== 'string') throw bad('data is not base64 text');
  const bytes = Buffer.from(tensor.data, 'base64');
  if (bytes.length !== count * itemBytes)
    throw bad(`${bytes.length} bytes of data for shape [${tensor.shape.join(', ')}] of ${tensor.dtype}`);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** A WireTensor's values: float32 → Float32Array, int32 → Int32Array, int64 → Float64Array (exact within 2^53). */
export function wireTensorToArray(tensor: WireTensor, what = 'tensor'): TensorValues {
  const bytes = wireTensorBytes(tensor, what);
  if (tensor.dtype === 'float32') return float32s(bytes);
  if (tensor.dtype === 'int32') return int32s(bytes);
  const values = int64sAsNumbers(bytes);
  for (const v of values)
    if (!Number.isSafeInteger(v)) throw new ApiError('internal', `${what} holds the int64 ${v}, beyond 2^53`);
  return values;
}

// ---- JSON numbers -------------------------------------------------------------------------------------------

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** Python's json module reads (and writes) these for the values JSON has no number for. */
function nonFinite(v: number): string {
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

/**
 * A double as a JSON number Python reads back exactly; NaN and ±Infinity as the literals Python's `json.loads`
 * accepts (so a metric or logprob that is not finite reaches the SDK as what it is, not as null).
 */
export function float64Json(v: number): string {
  return Number.isFinite(v) ? String(v) : nonFinite(v);
}

/**
 * The shortest decimal text (at most 9 significant digits) that reads back as the float32 `v` where Python parses it
 * as a double and numpy narrows it to float32, as the SDK does with TensorData (`float32Json(Math.fround(x))` for a
 * double). NaN and ±Infinity are written as Python's literals.
 */
export function float32Json(v: number): string {
  return latin1(writeFloat32(scratch(26), 0, v));
}

/**
 * float32Json of every value, comma-separated (a JSON array's inside). Written as ASCII bytes into one buffer:
 * number-to-string conversions cost far more than the digits themselves (65,536 logprobs in a few ms).
 */
export function float32ArrayJson(values: Float32Array): string {
  const out = scratch(values.length * 26); // the longest: -123456780000000000000.0 and a comma
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    at = writeFloat32(out, at, values[i]);
  }
  return latin1(at);
}

let buffer = new Uint8Array(1024);

/** A module-wide byte buffer of at least n bytes (single-threaded: used and decoded before anything else runs). */
function scratch(n: number): Uint8Array {
  if (buffer.length < n) buffer = new Uint8Array(Math.max(n, buffer.length * 2));
  return buffer;
}

function latin1(length: number): string {
  return Buffer.from(buffer.buffer, 0, length).toString('latin1');
}

function writeText(out: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
  return at;
}

/**
 * Writes float32Json(v) at `at`, returns the end. Digits: the value times a power of ten, rounded to d digits, for
 * the smallest d ≤ 9 that still reads back (if d digits do not, fewer cannot; most float32 values need 7 to 9, so
 * the search starts at 7). Each candidate is rounded from the value itself, not from a longer one, which could round
 * twice (12.5395574… → 12.539558, not 12.539557), and checked by dividing by an exact power of ten, which rounds
 * like parsing its decimal text does.
 */
function writeFloat32(out: Uint8Array, at: number, v: number): number {
  if (!Number.isFinite(v) || v === 0)
    return writeText(out, at, v === 0 ? (Object.is(v, -0) ? '-0.0' : '0.0') : nonFinite(v));
  const a = v < 0 ? -v : v;
  // k: the power of ten that makes a a 9-digit integer. The powers used, 10^(k − 8) … 10^k after adjusting k by
  // one, must be exact: |v| in about [1e-13, 1e21]; the rest are rare, written slowly.
  let k = 8 - Math.floor(Math.log10(a));
  if (k > 21 || k < -13) return writeText(out, at, slowFloat32Json(v));
  const nine = scaled(a, k);
  if (nine >= 1e9) k--;
  else if (nine < 1e8) k++;
  let exponent = k - 2;
  let digits = scaled(a, exponent);
  if (readsBack(digits, exponent, a))
    for (let e = exponent - 1; e >= k - 8; e--) {
      const shorter = scaled(a, e);
      if (!readsBack(shorter, e, a)) break;
      digits = shorter;
      exponent = e;
    }
  else {
    exponent = k - 1;
    digits = scaled(a, exponent);
    if (!readsBack(digits, exponent, a)) digits = scaled(a, (exponent = k));
  }
  while (digits % 10 === 0) {
    digits /= 10;
    exponent--;
  }
  if (v < 0) out[at++] = 0x2d; // -
  return writeDecimal(out, at, digits, exponent);
}

/** Whether digits × 10^−e reads back as the float32 a. */
function readsBack(digits: number, e: number, a: number): boolean {
  return Math.fround(e >= 0 ? digits / POW10[e] : digits * POW10[-e]) === a;
}

/** round(a × 10^k), |k| ≤ 22. */
function scaled(a: number, k: number): number {
  return Math.round(k >= 0 ? a * POW10[k] : a / POW10[-k]);
}

/** digits × 10^−exponent: plain (`0.00123`, `12.5`, `1200.0`), or with an exponent (`1.5e-9`) past 5 leading zeros. */
function writeDecimal(out: Uint8Array, at: number, digits: number, exponent: number): number {
  let n = 1;
  while (n < 10 && digits >= POW10[n]) n++;
  const point = n - exponent; // digits before the decimal point
  if (point > 0) {
    const fraction = Math.max(n - point, 0);
    const whole = fraction > 0 ? Math.floor(digits / POW10[fraction]) : digits;
    at = writeDigits(out, at, whole, n - fraction);
    for (let i = n; i < point; i++) out[at++] = 0x30;
    out[at++] = 0x2e; // .
    if (fraction === 0) {
      out[at++] = 0x30;
      return at;
    }
    return writeDigits(out, at, digits - whole * POW10[fraction], fraction);
  }
  if (point > -6) {
    out[at++] = 0x30;
    out[at++] = 0x2e;
    for (let i = 0; i < -point; i++) out[at++] = 0x30;
    return writeDigits(out, at, digits, n);
  }
  const first = Math.floor(digits / POW10[n - 1]);
  out[at++] = 0x30 + first;
  if (n > 1) {
    out[at++] = 0x2e;
    at = writeDigits(out, at, digits - first * POW10[n - 1], n - 1);
  }
  return writeText(out, at, `e${point - 1}`);
}

/** The n decimal digits of an integer, at `at`. */
function writeDigits(out: Uint8Array, at: number, digits: number, n: number): number {
  for (let i = at + n - 1; i >= at; i--) {
    const rest = (digits / 10) | 0; // digits ≤ 10^9 < 2^31
    out[i] = 0x30 + digits - rest * 10;
    digits = rest;
  }
  return at + n;
}

function slowFloat32Json(v: number): string {
  for (let p = 1; p < 9; p++) {
    const text = v.toPrecision(p);
    if (Math.fround(Number(text)) === v) return text;
  }
  return v.toPrecision(9);
}
