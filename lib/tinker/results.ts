import { ApiError } from '@/lib/errors';
import { ProtoWriter } from './proto-wire';
import { float32ArrayJson, float32Json, float64Json, wireTensorBytes, wireTensorToArray } from './tensors';
import type { ForwardResult, SampleResult, WireTensor } from './types';

/**
 * The results the SDK retrieves (docs/tinker.md §2.2), written from the internal forms: `ForwardBackwardOutput` and
 * `SampleResponse`, as protobuf (SDK 0.25, `Accept: application/x-protobuf`: proto/response_conv.py reads them) or
 * JSON (SDK ≤ 0.24's pydantic models). JSON comes back as text, because non-finite floats are written as the NaN /
 * Infinity literals Python's json module reads (JSON.stringify would make them null, which the SDK rejects).
 * A result that does not fit what the SDK can read is our own fault: a 500 naming what is wrong.
 */

const LOSS_FN_OUTPUT_TYPE = 'ArrayRecord';
/** What the SDK reads for an empty top-k slot (types/sample_response.py MASK_LOGPROB, token 0). */
export const TOPK_MASK_LOGPROB = -99999.0;

function internal(message: string): ApiError {
  return new ApiError('internal', message);
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** DType enum values of lib/tinker/tinker_public.proto. */
const PROTO_DTYPE = { float32: 1, int64: 2, int32: 3 } as const;

/** The public (JSON) dtype: the SDK's TensorDtype is float32 or int64, every integer width reads as int64. */
function publicDtype(tensor: WireTensor): 'float32' | 'int64' {
  return tensor.dtype === 'float32' ? 'float32' : 'int64';
}

/** Checks that every datum has the same output fields, as the SDK requires to merge them; returns their names. */
function outputFields(result: ForwardResult): string[] {
  if (!Array.isArray(result.loss_fn_outputs)) throw internal('forward result: loss_fn_outputs is not a list');
  const names = result.loss_fn_outputs.length > 0 ? Object.keys(result.loss_fn_outputs[0]) : [];
  const key = [...names].sort().join('\0');
  result.loss_fn_outputs.forEach((datum, i) => {
    if (Object.keys(datum).sort().join('\0') !== key)
      throw internal(`forward result: datum ${i} has other output fields than datum 0 (${names.join(', ')})`);
  });
  return names;
}

// ---- ForwardBackwardOutput ----------------------------------------------------------------------------------

/**
 * `ForwardBackwardOutput` as JSON: `{"loss_fn_output_type": "ArrayRecord", "loss_fn_outputs": [{name: TensorData}],
 * "metrics": {...}}`, float32 values written so that Python reads back the same float32 (float32Json). The
 * internal `stats` are never sent (docs/tinker.md §3.2).
 */
export function forwardResultJson(result: ForwardResult): string {
  const names = outputFields(result);
  const datums = result.loss_fn_outputs.map((datum, i) => {
    const fields = names.map((name) => {
      const tensor = datum[name];
      const values = wireTensorToArray(tensor, `forward result datum ${i} ${name}`);
      const text = values instanceof Float32Array ? float32ArrayJson(values) : values.join(',');
      return (
        `${JSON.stringify(name)}:{"data":[${text}],"dtype":"${publicDtype(tensor)}",` +
        `"shape":[${tensor.shape.join(',')}]}`
      );
    });
    return `{${fields.join(',')}}`;
  });
  return (
    `{"loss_fn_output_type":"${LOSS_FN_OUTPUT_TYPE}","loss_fn_outputs":[${datums.join(',')}],` +
    `"metrics":${metricsJson(result.metrics)}}`
  );
}

function metricsJson(metrics: Record<string, number>): string {
  const entries = Object.entries(metrics ?? {}).map(([k, v]) => {
    if (typeof v !== 'number') throw internal(`forward result: metric ${k} is not a number`);
    return `${JSON.stringify(k)}:${float64Json(v)}`;
  });
  return `{${entries.join(',')}}`;
}

/**
 * `ForwardBackwardOutput` as protobuf, as the SDK's deserialize_forward_backward_output reads it: one ArrayRecord per
 * run of consecutive datums whose fields have the same dtype and trailing shape (the dims after the first), each
 * field a BatchedTensor: the datums' arrays concatenated, int64 byte offsets (num_datums + 1), that trailing shape.
 */
export function forwardResultProto(result: ForwardResult): Uint8Array {
  const names = outputFields(result);
  const outputs = result.loss_fn_outputs;
  // Every tensor checked (and decoded) before its shape is trusted.
  const bytes = outputs.map((datum, i) =>
    names.map((name) => wireTensorBytes(datum[name], `forward result datum ${i} ${name}`)),
  );
  const signature = (datum: Record<string, WireTensor>) =>
    names.map((name) => `${datum[name].dtype}:${datum[name].shape.slice(1).join(',')}`).join(';');
  const out = new ProtoWriter();
  out.string(1, LOSS_FN_OUTPUT_TYPE);
  for (let start = 0; start < outputs.length;) {
    const key = signature(outputs[start]);
    let end = start + 1;
    while (end < outputs.length && signature(outputs[end]) === key) end++;
    const record = new ProtoWriter();
    record.string(1, LOSS_FN_OUTPUT_TYPE);
    names.forEach((name, field) => {
      const entry = new ProtoWriter();
      entry.string(1, name);
      entry.message(
        2,
        batchedTensor(
          outputs[start][name],
          bytes.slice(start, end).map((datum) => datum[field]),
        ),
      );
      record.message(2, entry);
    });
    record.int(3, end - start);
    out.message(2, record);
    start = end;
  }
  for (const [name, value] of Object.entries(result.metrics ?? {})) {
    if (typeof value !== 'number') throw internal(`forward result: metric ${name} is not a number`);
    const entry = new ProtoWriter();
    entry.string(1, name);
    entry.double(2, value);
    out.message(3, entry);
  }
  return out.finish();
}

/** One field of a run of datums: `first` gives the dtype and trailing shape they share. */
function batchedTensor(first: WireTensor, parts: Uint8Array[]): ProtoWriter {
  const offsets = new Float64Array(parts.length + 1);
  parts.forEach((part, j) => (offsets[j + 1] = offsets[j] + part.length));
  const data = new Uint8Array(offsets[parts.length]);
  parts.forEach((part, j) => data.set(part, offsets[j]));
  const batched = new ProtoWriter();
  // proto3 leaves out empty bytes fields that are not `optional`, as the runtime does: the same bytes.
  if (data.length > 0) batched.bytes(1, data);
  batched.bytes(2, int64Bytes(offsets));
  batched.int(3, PROTO_DTYPE[first.dtype]);
  batched.packedInts(4, first.shape.slice(1));
  return batched;
}

/** Non-negative safe integers as int64 little-endian bytes. */
function int64Bytes(values: Float64Array): Uint8Array {
  const words = new Uint32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    words[2 * i] = values[i] % 4294967296;
    words[2 * i + 1] = Math.floor(values[i] / 4294967296);
  }
  return bytesOf(words);
}

// ---- SampleResponse -----------------------------------------------------------------------------------------

const STOP_REASONS = { stop: 0, length: 1 } as const;

function checkSample(result: SampleResult): void {
  if (!Array.isArray(result.sequences)) throw internal('sample result: sequences is not a list');
  result.sequences.forEach((seq, i) => {
    if (!Array.isArray(seq.tokens) || !Array.isArray(seq.logprobs))
      throw internal(`sample result: sequence ${i} has no tokens or logprobs list`);
    if (!Object.hasOwn(STOP_REASONS, seq.stop_reason))
      throw internal(`sample result: sequence ${i} has stop_reason '${seq.stop_reason}'`);
    if (!seq.tokens.every((t) => Number.isInteger(t) && t >= 0 && t < 2 ** 31))
      throw internal(`sample result: sequence ${i} has a token that is not a token id`);
    if (seq.logprobs.length !== seq.tokens.length)
      throw internal(
        `sample result: sequence ${i} has ${seq.logprobs.length} logprobs for ${seq.tokens.length} tokens`,
      );
  });
  for (const row of result.topk_prompt_logprobs ?? [])
    for (const pair of row ?? [])
      if (!Array.isArray(pair) || !Number.isInteger(pair[0]) || pair[0] < 0 || pair[0] >= 2 ** 31)
        throw internal('sample result: a top-k prompt logprob is not a [token id, logprob] pair');
}

/** A float as float32 JSON text (what the SDK holds sampled logprobs as), or null. */
function logprobJson(v: number | null): string {
  return v === null ? 'null' : float32Json(Math.fround(v));
}

/**
 * `SampleResponse` as JSON (SDK ≤ 0.24's pydantic model): `{"type": "sample", "sequences": [{"stop_reason", "tokens",
 * "logprobs"}], "prompt_logprobs": [null, x…] | null, "topk_prompt_logprobs": [null, [[id, lp]…]…] | null,
 * "prompt_cache_hit_tokens": 0}`.
 */
export function sampleResultJson(result: SampleResult): string {
  checkSample(result);
  const sequences = result.sequences.map(
    (seq) =>
      `{"stop_reason":"${seq.stop_reason}","tokens":[${seq.tokens.join(',')}],` +
      `"logprobs":[${seq.logprobs.map(logprobJson).join(',')}]}`,
  );
  const prompt = result.prompt_logprobs === null ? 'null' : `[${result.prompt_logprobs.map(logprobJson).join(',')}]`;
  const topk =
    result.topk_prompt_logprobs === null
      ? 'null'
      : `[${result.topk_prompt_logprobs
          .map((row) => (row === null ? 'null' : `[${row.map(([id, lp]) => `[${id},${logprobJson(lp)}]`).join(',')}]`))
          .join(',')}]`;
  return (
    `{"type":"sample","sequences":[${sequences.join(',')}],"prompt_logprobs":${prompt},` +
    `"topk_prompt_logprobs":${topk},"prompt_cache_hit_tokens":0}`
  );
}

/**
 * `SampleResponse` as protobuf, as the SDK's deserialize_sample_response reads it: int32 tokens and float32 logprobs;
 * prompt_logprobs float32 with NaN for the positions without one; top-k as (prompt length × k) int32 / float32
 * matrices, k the longest row, empty slots and null rows filled with token 0 and TOPK_MASK_LOGPROB.
 */
export function sampleResultProto(result: SampleResult): Uint8Array {
  checkSample(result);
  const out = new ProtoWriter();
  for (const seq of result.sequences) {
    const sequence = new ProtoWriter();
    if (STOP_REASONS[seq.stop_reason] !== 0) sequence.int(1, STOP_REASONS[seq.stop_reason]);
    if (seq.tokens.length > 0) sequence.bytes(2, bytesOf(Int32Array.from(seq.tokens)));
    sequence.bytes(3, bytesOf(Float32Array.from(seq.logprobs)));
    out.message(1, sequence);
  }
  if (result.prompt_logprobs !== null)
    out.bytes(2, bytesOf(Float32Array.from(result.prompt_logprobs, (v) => (v === null ? NaN : v))));
  const rows = result.topk_prompt_logprobs;
  if (rows !== null) {
    const k = rows.reduce((max, row) => Math.max(max, row?.length ?? 0), 0);
    // The SDK reads a matrix without rows or columns as "not asked for"; there is nothing to send.
    if (rows.length > 0 && k > 0) {
      const ids = new Int32Array(rows.length * k);
      const logprobs = new Float32Array(rows.length * k).fill(TOPK_MASK_LOGPROB);
      rows.forEach((row, i) =>
        row?.forEach(([id, lp], j) => {
          ids[i * k + j] = id;
          logprobs[i * k + j] = lp;
        }),
      );
      const topk = new ProtoWriter();
      topk.bytes(1, bytesOf(ids));
      topk.bytes(2, bytesOf(logprobs));
      topk.int(3, k);
      topk.int(4, rows.length);
      out.message(3, topk);
    }
  }
  return out.finish();
}
