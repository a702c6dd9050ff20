import { ApiError } from '@/lib/errors';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import {
  forwardBackwardBodySchema,
  forwardBodySchema,
  modelInputTokens,
  nonTextChunkError,
  type ForwardBackwardInputBody,
  type TensorDataBody,
} from '@/lib/schemas/tinker';
import { checkForward, type RawDatum, type RawTensor } from './forward-inputs';
import { ProtoReader } from './proto-wire';
import { float32s, int32s, int64sAsNumbers } from './tensors';
import type { ForwardPayload } from './types';
import { decodeContentEncoding, MAX_DECOMPRESSED_BYTES } from './zstd';

/**
 * forward / forward_backward request bodies, in both of the SDK's wire eras (docs/tinker.md §2): JSON
 * (`/api/v1/forward`, and `/api/v1/forward_backward` from SDK 0.18 – 0.24) and protobuf (`/api/v1/forward_backward`
 * from SDK 0.25: `Content-Type: application/x-protobuf`, optionally `Content-Encoding: zstd`). Both decode into the
 * same request, checked by lib/tinker/forward-inputs.ts.
 */

export interface ForwardRequest {
  model_id: string;
  /** The request's place in its training client's order (docs/tinker.md §2.3); null: after everything received. */
  seq_id: number | null;
  /** `forward` (no gradients): the JSON `/api/v1/forward` route, or the protobuf body's flag. */
  forward_only: boolean;
  payload: ForwardPayload;
}

/** Issues a schema error lists at most: a body with a wrong type in every element of a tensor makes one per element. */
const MAX_ISSUES = 20;

/**
 * A JSON body already parsed (`route`: which of the two routes it came to). Not the schema: 422 with pydantic-style
 * issues; a request the loss cannot use: 400 naming the datum and field.
 */
export function decodeForwardJson(route: 'forward' | 'forward_backward', body: unknown): ForwardRequest {
  let input: ForwardBackwardInputBody;
  let modelId: string;
  let seqId: number | null | undefined;
  if (route === 'forward') {
    const parsed = forwardBodySchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw schemaError(parsed.error);
    ({ forward_input: input, model_id: modelId, seq_id: seqId } = parsed.data);
  } else {
    const parsed = forwardBackwardBodySchema.safeParse(body, { reportInput: true });
    if (!parsed.success) throw schemaError(parsed.error);
    ({ forward_backward_input: input, model_id: modelId, seq_id: seqId } = parsed.data);
  }
  const data = input.data.map((datum, i): RawDatum => ({
    tokens: modelInputTokens(datum.model_input, 'trains', `datum ${i}'s model_input`),
    inputs: new Map(Object.entries(datum.loss_fn_inputs).map(([name, t]) => [name, jsonTensor(t, i, name)])),
  }));
  const config = input.loss_fn_config ? new Map(Object.entries(input.loss_fn_config)) : null;
  return {
    model_id: modelId,
    seq_id: seqId ?? null,
    // The JSON forward_backward route never runs forward-only: the SDK documents its forward_only flag as
    // honoured on the protobuf path alone.
    forward_only: route === 'forward',
    payload: checkForward(input.loss_fn, config, data),
  };
}

function schemaError(error: Parameters<typeof zodIssuesToValidation>[0]): ApiError {
  return ApiError.validation(zodIssuesToValidation(error, 'body').slice(0, MAX_ISSUES));
}

function jsonTensor(t: TensorDataBody, datum: number, name: string): RawTensor {
  const crow = t.sparse_crow_indices ?? null;
  const col = t.sparse_col_indices ?? null;
  if ((crow === null) !== (col === null))
    throw new ApiError(
      'bad_request',
      `datum ${datum}: loss_fn_inputs.${name} has only one of sparse_crow_indices and sparse_col_indices; a sparse ` +
        'tensor needs both',
    );
  return {
    dtype: t.dtype,
    shape: t.shape ?? null,
    values: t.dtype === 'float32' ? Float32Array.from(t.data) : Float64Array.from(t.data),
    sparse: crow && col ? { crow: Float64Array.from(crow), col: Float64Array.from(col) } : null,
  };
}

/**
 * A protobuf `ForwardBackwardRequest` body (lib/tinker/tinker_public.proto), decompressed first when
 * `contentEncoding` says zstd (at most `limitBytes` after decompression: 413 past it). Malformed protobuf: 400
 * naming the message and field; a request the loss cannot use: 400 naming the datum and field.
 */
export function decodeForwardBackwardProto(
  body: Uint8Array,
  contentEncoding?: string | null,
  limitBytes = MAX_DECOMPRESSED_BYTES,
): ForwardRequest {
  const r = ProtoReader.of(decodeContentEncoding(body, contentEncoding, limitBytes), 'ForwardBackwardRequest');
  let modelId = '';
  let seqId = 0;
  let lossFn = '';
  let forwardOnly = false;
  const config = new Map<string, number>();
  const data: RawDatum[] = [];
  while (r.next()) {
    switch (r.field) {
      case 1:
        modelId = r.string('model_id');
        break;
      case 2:
        seqId = r.int32('seq_id');
        break;
      case 3:
        data.push(readDatum(r.message(`data[${data.length}]`), data.length));
        break;
      case 4:
        lossFn = r.string('loss_fn');
        break;
      case 5: {
        const entry = r.message(`loss_fn_config[${config.size}]`);
        let key = '';
        let value = 0;
        while (entry.next()) {
          if (entry.field === 1) key = entry.string('key');
          else if (entry.field === 2) value = entry.double('value');
          else entry.skip();
        }
        config.set(key, value);
        break;
      }
      case 6:
        forwardOnly = r.bool('forward_only');
        break;
      default:
        r.skip();
    }
  }
  if (modelId === '') throw new ApiError('bad_request', 'model_id is missing');
  if (seqId < 0) throw new ApiError('bad_request', `seq_id is ${seqId}; it must be 1 or more`);
  return {
    model_id: modelId,
    // proto3 cannot leave an int32 out: the SDK writes 0 for "no seq_id" (proto/request_conv.py).
    seq_id: seqId === 0 ? null : seqId,
    forward_only: forwardOnly,
    payload: checkForward(lossFn, config, data),
  };
}

/**
 * model_id and seq_id of a (decompressed) protobuf body whose rest may be refused (docs/tinker.md §2.3: a refused request still
 * uses up its seq_id); null when even they cannot be read.
 */
export function peekForwardBackwardProtoIds(body: Uint8Array): { modelId: string; seqId: number | null } | null {
  try {
    const r = ProtoReader.of(body, 'ForwardBackwardRequest');
    let modelId = '';
    let seqId = 0;
    while (r.next()) {
      if (r.field === 1) modelId = r.string('model_id');
      else if (r.field === 2) seqId = r.int32('seq_id');
      else r.skip();
    }
    return modelId ? { modelId, seqId: seqId > 0 ? seqId : null } : null;
  } catch {
    return null;
  }
}

function readDatum(r: ProtoReader, index: number): RawDatum {
  const chunks: Uint8Array[] = [];
  const inputs = new Map<string, RawTensor>();
  let entries = 0;
  while (r.next()) {
    if (r.field === 1) chunks.push(readChunk(r.message(`model_input[${chunks.length}]`), index));
    else if (r.field === 2) {
      // A map entry: key and value may come in any order, so the value is read once the key can name it.
      const entry = r.message(`loss_fn_inputs[${entries++}]`);
      let name = '';
      let value: Uint8Array | null = null;
      while (entry.next()) {
        if (entry.field === 1) name = entry.string('key');
        else if (entry.field === 2) value = entry.bytes('value');
        else entry.skip();
      }
      const path = `${r.path}.loss_fn_inputs[${JSON.stringify(name.slice(0, 100))}]`;
      inputs.set(name, readTensor(ProtoReader.of(value ?? new Uint8Array(0), path), index, name));
    } else r.skip();
  }
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const tokens = new Uint8Array(length);
  length = 0;
  for (const chunk of chunks) {
    tokens.set(chunk, length);
    length += chunk.length;
  }
  return { tokens: int32s(tokens), inputs };
}

/** A Chunk's int32 token bytes; image and dmel chunks are refused (docs/tinker.md: text models only). */
function readChunk(r: ProtoReader, datum: number): Uint8Array {
  let tokens: Uint8Array | null = null;
  let other: string | null = null;
  while (r.next()) {
    if (r.field === 1) {
      const text = r.message('encoded_text');
      tokens = new Uint8Array(0);
      while (text.next()) {
        if (text.field === 1) tokens = text.bytes('tokens');
        else text.skip();
      }
      other = null;
    } else {
      if (r.field === 2) other = 'image';
      else if (r.field === 3) other = 'dmel';
      r.skip();
    }
  }
  if (other !== null) throw nonTextChunkError('trains', `datum ${datum}'s model_input`, other);
  if (tokens === null) r.fail('a chunk with none of encoded_text, image or dmel');
  if (tokens.length % 4 !== 0) r.fail(`${tokens.length} bytes of int32 tokens`, 'encoded_text.tokens');
  return tokens;
}

const DTYPE_NAMES = ['DTYPE_UNSPECIFIED', 'DTYPE_FLOAT32', 'DTYPE_INT64', 'DTYPE_INT32', 'DTYPE_BFLOAT16'];

function readTensor(r: ProtoReader, datum: number, name: string): RawTensor {
  let dense: Uint8Array = new Uint8Array(0);
  let sparse: { values: Uint8Array; crow: Uint8Array; col: Uint8Array } | null = null;
  let dtype = 0;
  const shape: number[] = [];
  while (r.next()) {
    switch (r.field) {
      case 1:
        dense = r.bytes('dense');
        sparse = null;
        break;
      case 2: {
        const csr = r.message('sparse_csr');
        sparse = { values: new Uint8Array(0), crow: new Uint8Array(0), col: new Uint8Array(0) };
        while (csr.next()) {
          if (csr.field === 1) sparse.values = csr.bytes('values');
          else if (csr.field === 2) sparse.crow = csr.bytes('crow_indices');
          else if (csr.field === 3) sparse.col = csr.bytes('col_indices');
          else csr.skip();
        }
        break;
      }
      case 3:
        dtype = r.int32('dtype');
        break;
      case 4:
        r.int64s('shape', shape);
        break;
      default:
        r.skip();
    }
  }
  // The SDK writes float32 and int64 only (proto/request_conv.py).
  if (dtype !== 1 && dtype !== 2)
    throw new ApiError(
      'bad_request',
      `datum ${datum}: loss_fn_inputs.${name} has dtype ${DTYPE_NAMES[dtype] ?? dtype}; inputs are DTYPE_FLOAT32 or ` +
        'DTYPE_INT64',
    );
  const float = dtype === 1;
  const itemBytes = float ? 4 : 8;
  const values = sparse ? sparse.values : dense;
  if (values.length % itemBytes !== 0)
    r.fail(`${values.length} bytes of ${float ? 'float32' : 'int64'} values`, sparse ? 'sparse_csr.values' : 'dense');
  for (const [field, bytes] of sparse
    ? ([
        ['crow_indices', sparse.crow],
        ['col_indices', sparse.col],
      ] as const)
    : [])
    if (bytes.length % 8 !== 0) r.fail(`${bytes.length} bytes of int64 indices`, `sparse_csr.${field}`);
  return {
    dtype: float ? 'float32' : 'int64',
    // proto3 cannot tell an empty shape from none: the SDK leaves it out for a shapeless (1-D) TensorData.
    shape: shape.length === 0 ? null : shape,
    values: float ? float32s(values) : int64sAsNumbers(values),
    sparse: sparse ? { crow: int64sAsNumbers(sparse.crow), col: int64sAsNumbers(sparse.col) } : null,
  };
}
