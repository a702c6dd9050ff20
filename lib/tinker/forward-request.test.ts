import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import {
  MAX_DATUMS_PER_REQUEST,
  MAX_INPUT_ELEMENTS_PER_REQUEST,
  MAX_LOSS_FN_CONFIG_KEYS,
  MAX_TOKENS_PER_REQUEST,
} from './forward-inputs';
import { decodeForwardBackwardProto, decodeForwardJson, type ForwardRequest } from './forward-request';
import { ProtoWriter } from './proto-wire';
import { wireTensorToArray } from './tensors';

const FIXTURES = path.resolve(import.meta.dirname, '../../tests/fixtures/tinker');
const MODEL_ID = '0b9c6f0e-3f4a-4c57-9d0e-1f2a3b4c5d6e';

interface RequestFixture {
  name: string;
  file: string;
  content_encoding?: string;
  limit_bytes?: number;
  expected?: ForwardRequest;
  error?: { status: number; contains: string };
}

const manifest = JSON.parse(readFileSync(path.join(FIXTURES, 'requests.json'), 'utf8')) as RequestFixture[];
const body = (file: string) => new Uint8Array(readFileSync(path.join(FIXTURES, file)));

/** The ApiError `fn` throws. */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err;
  }
  throw new Error('did not throw');
}

/** Values of a payload tensor, as plain numbers. */
const values = (t: Parameters<typeof wireTensorToArray>[0]) => Array.from(wireTensorToArray(t));

describe('protobuf bodies written by the protobuf runtime (scripts/tinker-proto-fixtures.py)', () => {
  it('has fixtures of every kind', () => {
    expect(manifest.filter((f) => f.expected).length).toBeGreaterThanOrEqual(13);
    expect(manifest.filter((f) => f.error).length).toBeGreaterThanOrEqual(35);
  });

  it.each(manifest.filter((f) => f.expected).map((f) => [f.name, f] as const))('decodes %s', (_name, f) => {
    const decoded = decodeForwardBackwardProto(body(f.file), f.content_encoding, f.limit_bytes);
    expect(decoded).toEqual(f.expected);
  });

  it.each(manifest.filter((f) => f.error).map((f) => [f.name, f] as const))('refuses %s', (_name, f) => {
    const err = apiError(() => decodeForwardBackwardProto(body(f.file), f.content_encoding, f.limit_bytes));
    expect(err.status).toBe(f.error?.status);
    expect(err.message).toContain(f.error?.contains);
  });

  it('densifies sparse CSR targets and weights', () => {
    const [sparse] = decodeForwardBackwardProto(body('requests/cross_entropy_topk_sparse.pb')).payload.data;
    expect(sparse.loss_fn_inputs.weights.shape).toEqual([6, 4]);
    expect(values(sparse.loss_fn_inputs.weights)).toEqual([
      1, 0, 0, 0, 0, 0, 0.5, -0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0.75, 0, 0, 0,
    ]);
    const targets = values(sparse.loss_fn_inputs.target_tokens);
    expect(targets.filter((t) => t !== 0)).toHaveLength(5);
    expect(sparse.loss_fn_inputs.target_tokens.dtype).toBe('int64');
  });
});

// ---- requests written here --------------------------------------------------------------------------------------

interface TensorSpec {
  dtype?: 1 | 2 | 3 | 4;
  shape?: number[];
  dense?: Uint8Array;
  sparse?: { values: Uint8Array; crow: number[]; col: number[] };
}

const f32 = (xs: number[]) => new Uint8Array(Float32Array.from(xs).buffer);
const i64 = (xs: number[]) => new Uint8Array(BigInt64Array.from(xs.map(BigInt)).buffer);

/** A ForwardBackwardRequest body, written with our own writer (the fixtures check it against the runtime). */
function protoBody(opts: {
  lossFn?: string;
  seqId?: number;
  config?: Record<string, number>;
  data: { tokens: number[]; inputs: Record<string, TensorSpec> }[];
}): Uint8Array {
  const w = new ProtoWriter();
  w.string(1, MODEL_ID);
  if (opts.seqId) w.int(2, opts.seqId);
  for (const d of opts.data) {
    const datum = new ProtoWriter();
    const text = new ProtoWriter();
    text.bytes(1, new Uint8Array(Int32Array.from(d.tokens).buffer));
    const chunk = new ProtoWriter();
    chunk.message(1, text);
    datum.message(1, chunk);
    for (const [name, spec] of Object.entries(d.inputs)) {
      const tensor = new ProtoWriter();
      if (spec.sparse) {
        const csr = new ProtoWriter();
        csr.bytes(1, spec.sparse.values);
        csr.bytes(2, i64(spec.sparse.crow));
        csr.bytes(3, i64(spec.sparse.col));
        tensor.message(2, csr);
      } else tensor.bytes(1, spec.dense ?? new Uint8Array(0));
      tensor.int(3, spec.dtype ?? 1);
      tensor.packedInts(4, spec.shape ?? []);
      const entry = new ProtoWriter();
      entry.string(1, name);
      entry.message(2, tensor);
      datum.message(2, entry);
    }
    w.message(3, datum);
  }
  w.string(4, opts.lossFn ?? 'cross_entropy');
  for (const [k, v] of Object.entries(opts.config ?? {})) {
    const entry = new ProtoWriter();
    entry.string(1, k);
    entry.double(2, v);
    w.message(5, entry);
  }
  return w.finish();
}

function rlDatum() {
  return {
    tokens: [10, 11, 12],
    inputs: {
      target_tokens: { dtype: 2 as const, shape: [3], dense: i64([11, 12, 13]) },
      logprobs: { shape: [3], dense: f32([-1, -2, -0.5]) },
      advantages: { shape: [3], dense: f32([0.5, 0, -1]) },
    },
  };
}

function ceDatum(n: number) {
  return {
    tokens: Array.from({ length: n }, (_, i) => i + 1),
    inputs: {
      target_tokens: { dtype: 2 as const, shape: [n], dense: i64(Array.from({ length: n }, (_, i) => i + 2)) },
    },
  };
}

describe('decodeForwardBackwardProto', () => {
  it('reads loss_fn_config (an empty one is null) and refuses non-finite values and keys its loss does not take', () => {
    const dro = (config: Record<string, number>) => protoBody({ lossFn: 'dro', data: [rlDatum()], config });
    const ppo = (config: Record<string, number>) => protoBody({ lossFn: 'ppo', data: [rlDatum()], config });
    expect(decodeForwardBackwardProto(dro({ beta: 0.25 })).payload.loss_fn_config).toEqual({ beta: 0.25 });
    expect(decodeForwardBackwardProto(protoBody({ data: [ceDatum(2)] })).payload.loss_fn_config).toBeNull();
    const nan = apiError(() => decodeForwardBackwardProto(dro({ beta: NaN })));
    expect(nan.status).toBe(400);
    expect(nan.message).toBe('loss_fn_config.beta is NaN; it must be a finite number');
    // A misspelt key is refused at submission, as the worker would refuse it, rather than silently ignored.
    const misspelt = apiError(() => decodeForwardBackwardProto(ppo({ clip_low: 0.9 })));
    expect(misspelt.status).toBe(400);
    expect(misspelt.message).toBe(
      "loss_fn_config keys 'clip_low' do not apply to ppo (it takes: clip_low_threshold, clip_high_threshold)",
    );
    expect(
      apiError(() => decodeForwardBackwardProto(protoBody({ data: [ceDatum(2)], config: { beta: 0.1 } }))).message,
    ).toBe("loss_fn_config keys 'beta' do not apply to cross_entropy (it takes: none)");
    expect(
      apiError(() => decodeForwardBackwardProto(ppo({ clip_low_threshold: 1.5, clip_high_threshold: 1.2 }))).message,
    ).toBe('loss_fn_config clip_low_threshold (1.5) is above clip_high_threshold (1.2)');
    expect(
      decodeForwardBackwardProto(ppo({ clip_low_threshold: 0.9, clip_high_threshold: 1.1 })).payload.loss_fn_config,
    ).toEqual({ clip_low_threshold: 0.9, clip_high_threshold: 1.1 });
    const many = Object.fromEntries(Array.from({ length: MAX_LOSS_FN_CONFIG_KEYS + 1 }, (_, i) => [`k${i}`, i]));
    expect(apiError(() => decodeForwardBackwardProto(protoBody({ data: [ceDatum(2)], config: many }))).message).toBe(
      `loss_fn_config has ${MAX_LOSS_FN_CONFIG_KEYS + 1} keys; at most ${MAX_LOSS_FN_CONFIG_KEYS} are accepted`,
    );
  });

  it('writes the payload tensors as docs/tinker.md §3.1 says', () => {
    const decoded = decodeForwardBackwardProto(
      protoBody({
        lossFn: 'ppo',
        seqId: 5,
        data: [
          {
            tokens: [10, 11, 12],
            inputs: {
              target_tokens: { dtype: 2, dense: i64([11, 12, 13]) }, // no shape: 1-D
              logprobs: { shape: [3], dense: f32([-1, -2, -0.5]) },
              advantages: { shape: [3], dense: f32([0.5, 0, -1]) },
            },
          },
        ],
      }),
    );
    expect(decoded.seq_id).toBe(5);
    const [d] = decoded.payload.data;
    expect(d.tokens).toEqual({
      dtype: 'int32',
      shape: [3],
      data: Buffer.from(Int32Array.from([10, 11, 12]).buffer).toString('base64'),
    });
    expect(d.loss_fn_inputs.target_tokens).toEqual({
      dtype: 'int64',
      shape: [3],
      data: Buffer.from(i64([11, 12, 13])).toString('base64'),
    });
    expect(d.loss_fn_inputs.logprobs).toEqual({
      dtype: 'float32',
      shape: [3],
      data: Buffer.from(f32([-1, -2, -0.5])).toString('base64'),
    });
  });

  it('checks the CSR structure (sparse tensors are 2-D, with a shape)', () => {
    const csr = (over: Partial<TensorSpec>, sparse: Partial<NonNullable<TensorSpec['sparse']>> = {}) =>
      protoBody({
        data: [
          {
            tokens: [1, 2],
            inputs: {
              target_tokens: { dtype: 2, shape: [2, 2], dense: i64([1, 2, 3, 4]) },
              weights: {
                shape: [2, 2],
                sparse: { values: f32([1, 2]), crow: [0, 1, 2], col: [1, 0], ...sparse },
                ...over,
              },
            },
          },
        ],
      });
    expect(values(decodeForwardBackwardProto(csr({})).payload.data[0].loss_fn_inputs.weights)).toEqual([0, 1, 2, 0]);
    const message = (b: Uint8Array) => apiError(() => decodeForwardBackwardProto(b)).message;
    expect(message(csr({ shape: [] }))).toBe(
      'datum 0: loss_fn_inputs.weights is sparse (CSR) without a shape; a sparse tensor needs its shape',
    );
    expect(message(csr({ shape: [4] }, { crow: [0, 1, 1, 2, 2] }))).toContain(
      'is sparse (CSR) with shape [4]; sparse inputs are 2-D',
    );
    expect(message(csr({}, { col: [1] }))).toBe(
      'datum 0: loss_fn_inputs.weights: sparse_col_indices has 1 entries for 2 values; they must agree',
    );
    expect(message(csr({}, { crow: [1, 1, 2] }))).toContain('must start at 0 and end at the number of values (2)');
    expect(message(csr({}, { col: [1, -1] }))).toContain('sparse_col_indices[1] is -1, outside the shape');
  });

  it('charges a sparse tensor its dense size before allocating it', () => {
    const huge = protoBody({
      data: [
        {
          tokens: [1],
          inputs: {
            target_tokens: { dtype: 2, shape: [1, 1 << 24], sparse: { values: i64([5]), crow: [0, 1], col: [7] } },
          },
        },
      ],
    });
    const started = performance.now();
    const err = apiError(() => decodeForwardBackwardProto(huge));
    expect(performance.now() - started).toBeLessThan(100);
    expect(err.message).toBe(
      `datum 0: loss_fn_inputs.target_tokens has shape [1, 16777216]: the request's inputs may hold at most ` +
        `${MAX_INPUT_ELEMENTS_PER_REQUEST} elements in all`,
    );
  });

  it('refuses more tokens than a request may hold', () => {
    const half = MAX_TOKENS_PER_REQUEST / 2;
    const err = apiError(() =>
      decodeForwardBackwardProto(protoBody({ data: [ceDatum(half), ceDatum(half), ceDatum(1)] })),
    );
    expect(err.message).toBe(
      `the request has more than ${MAX_TOKENS_PER_REQUEST} input tokens; send fewer datums per request`,
    );
  });

  it('names the datum whose chunk is empty, and refuses a datum without tokens', () => {
    const empty = new ProtoWriter();
    empty.message(1, new ProtoWriter()); // a Chunk with nothing set
    const w = new ProtoWriter();
    w.string(1, MODEL_ID);
    w.message(3, empty);
    w.string(4, 'cross_entropy');
    expect(apiError(() => decodeForwardBackwardProto(w.finish())).message).toBe(
      'malformed protobuf body at ForwardBackwardRequest.data[0].model_input[0]: a chunk with none of encoded_text, image or dmel',
    );
    const noTokens = protoBody({ data: [{ tokens: [], inputs: ceDatum(1).inputs }] });
    expect(apiError(() => decodeForwardBackwardProto(noTokens)).message).toBe('datum 0: model_input has no tokens');
  });

  it('never throws anything but an ApiError, nor hangs, on thousands of mutations of valid bodies', () => {
    let seed = 0x9e3779b9;
    const random = () => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const int = (n: number) => Math.floor(random() * n);
    const bases = ['ppo.pb', 'cross_entropy_topk_sparse.pb', 'unknown_fields.pb', 'cross_entropy_multichunk.pb'].map(
      (f) => body(`requests/${f}`),
    );
    const outcomes = { decoded: 0, refused: 0 };
    let slowest = 0;
    for (let i = 0; i < 4000; i++) {
      const base = bases[i % bases.length];
      let mutated = Array.from(base);
      for (let m = 1 + int(3); m > 0; m--) {
        const at = int(mutated.length);
        switch (int(6)) {
          case 0:
            mutated[at] ^= 1 << int(8);
            break;
          case 1:
            mutated[at] = int(256);
            break;
          case 2:
            mutated.splice(at, 0, ...Array.from({ length: 1 + int(12) }, () => int(256)));
            break;
          case 3:
            mutated.splice(at, 1 + int(16));
            break;
          case 4:
            mutated = mutated.slice(0, at);
            break;
          default:
            mutated.splice(at, 0, ...mutated.slice(int(mutated.length), int(mutated.length) + 40));
        }
      }
      const started = performance.now();
      try {
        decodeForwardBackwardProto(Uint8Array.from(mutated));
        outcomes.decoded++;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 400) throw err;
        outcomes.refused++;
      }
      slowest = Math.max(slowest, performance.now() - started);
    }
    expect(outcomes.refused).toBeGreaterThan(1000);
    expect(outcomes.decoded).toBeGreaterThan(50);
    // Each decode is linear in the body; a second allows for a loaded machine, a loop would never end.
    expect(slowest).toBeLessThan(1000);
  });
});

// ---- JSON (SDK 0.18 – 0.24) ------------------------------------------------------------------------------------

/**
 * Bodies as the SDK's pydantic models dump them (model_dump(mode="json", exclude_none=True)): TensorData from numpy
 * or torch has its shape, one built from a list may not; 2-D torch targets and weights come as sparse CSR; every
 * chunk has its type; seq_id and loss_fn_config are left out when None.
 */
function jsonBody(route: 'forward' | 'forward_backward', input: Record<string, unknown>, extra = {}) {
  return {
    [route === 'forward' ? 'forward_input' : 'forward_backward_input']: input,
    model_id: MODEL_ID,
    ...extra,
  };
}

const sdkDatum = {
  loss_fn_inputs: {
    target_tokens: { data: [6, 7, 8], dtype: 'int64', shape: [3] },
    weights: { data: [1.0, 0.0, 0.5], dtype: 'float32' },
  },
  model_input: {
    chunks: [
      { tokens: [5, 6], type: 'encoded_text' },
      { tokens: [7], type: 'encoded_text' },
    ],
  },
};

describe('decodeForwardJson', () => {
  it('decodes a forward_backward body of the JSON era', () => {
    const decoded = decodeForwardJson(
      'forward_backward',
      jsonBody(
        'forward_backward',
        { data: [sdkDatum], loss_fn: 'cross_entropy' },
        { seq_id: 4, type: 'forward_backward' },
      ),
    );
    expect(decoded.model_id).toBe(MODEL_ID);
    expect(decoded.seq_id).toBe(4);
    expect(decoded.forward_only).toBe(false);
    expect(decoded.payload.loss_fn_config).toBeNull();
    const [d] = decoded.payload.data;
    expect(values(d.tokens)).toEqual([5, 6, 7]);
    expect(d.loss_fn_inputs.target_tokens.dtype).toBe('int64');
    expect(values(d.loss_fn_inputs.target_tokens)).toEqual([6, 7, 8]);
    expect(values(d.loss_fn_inputs.weights)).toEqual([1, 0, 0.5]);
    expect(d.loss_fn_inputs.weights.shape).toEqual([3]);
  });

  it('decodes a forward body: forward only, no seq_id', () => {
    const decoded = decodeForwardJson(
      'forward',
      jsonBody('forward', { data: [sdkDatum], loss_fn: 'cross_entropy', loss_fn_config: {} }),
    );
    expect(decoded.forward_only).toBe(true);
    expect(decoded.seq_id).toBeNull();
    expect(decoded.payload.loss_fn_config).toBeNull();
    const refused = apiError(() =>
      decodeForwardJson(
        'forward',
        jsonBody('forward', { data: [sdkDatum], loss_fn: 'cross_entropy', loss_fn_config: { beta: 0.5 } }),
      ),
    );
    expect(refused.status).toBe(400);
  });

  it('gives the same payload as the protobuf body of the same request', () => {
    const json = decodeForwardJson(
      'forward_backward',
      jsonBody('forward_backward', { data: [sdkDatum], loss_fn: 'cross_entropy' }),
    );
    const proto = decodeForwardBackwardProto(
      protoBody({
        data: [
          {
            tokens: [5, 6, 7],
            inputs: {
              target_tokens: { dtype: 2, shape: [3], dense: i64([6, 7, 8]) },
              weights: { shape: [3], dense: f32([1, 0, 0.5]) },
            },
          },
        ],
      }),
    );
    expect(json).toEqual(proto);
  });

  it('densifies sparse CSR tensors as torch sends 2-D targets and weights', () => {
    const decoded = decodeForwardJson(
      'forward_backward',
      jsonBody('forward_backward', {
        data: [
          {
            loss_fn_inputs: {
              target_tokens: {
                data: [9, 4],
                dtype: 'int64',
                shape: [3, 2],
                sparse_crow_indices: [0, 1, 1, 2],
                sparse_col_indices: [1, 0],
              },
              weights: {
                data: [0.5, 1.0],
                dtype: 'float32',
                shape: [3, 2],
                sparse_crow_indices: [0, 1, 1, 2],
                sparse_col_indices: [1, 0],
              },
            },
            model_input: { chunks: [{ tokens: [1, 2, 3], type: 'encoded_text' }] },
          },
        ],
        loss_fn: 'cross_entropy',
      }),
    );
    const inputs = decoded.payload.data[0].loss_fn_inputs;
    expect(inputs.target_tokens.shape).toEqual([3, 2]);
    expect(values(inputs.target_tokens)).toEqual([0, 9, 0, 0, 4, 0]);
    expect(values(inputs.weights)).toEqual([0, 0.5, 0, 0, 1, 0]);
  });

  it('rounds float inputs to float32, as the SDK does', () => {
    const datum = {
      ...sdkDatum,
      loss_fn_inputs: { ...sdkDatum.loss_fn_inputs, weights: { data: [0.1, 1 / 3, 2], dtype: 'float32' } },
    };
    const decoded = decodeForwardJson(
      'forward_backward',
      jsonBody('forward_backward', { data: [datum], loss_fn: 'cross_entropy' }),
    );
    expect(values(decoded.payload.data[0].loss_fn_inputs.weights)).toEqual([Math.fround(0.1), Math.fround(1 / 3), 2]);
  });

  it('answers a body that is not the schema with a 422 naming the field', () => {
    const bad = jsonBody('forward_backward', {
      data: [{ ...sdkDatum, model_input: { chunks: [{ tokens: [1, 'x'], type: 'encoded_text' }] } }],
      loss_fn: 'cross_entropy',
    });
    const err = apiError(() => decodeForwardJson('forward_backward', bad));
    expect(err.status).toBe(422);
    // A list of numbers is checked in one loop (lib/schemas/tinker.ts numberList): the issue names the list, and the
    // item in its message.
    expect(err.issues?.[0]).toMatchObject({
      loc: ['body', 'forward_backward_input', 'data', 0, 'model_input', 'chunks', 0, 'tokens'],
      type: 'value_error',
      msg: `Value error, item 1 ("x") is not a token id: whole numbers from 0 to 2147483647`,
    });
    const dtype = apiError(() =>
      decodeForwardJson(
        'forward',
        jsonBody('forward', {
          data: [{ ...sdkDatum, loss_fn_inputs: { target_tokens: { data: [1, 2, 3], dtype: 'int32' } } }],
          loss_fn: 'cross_entropy',
        }),
      ),
    );
    expect(dtype.issues?.[0]).toMatchObject({
      loc: ['body', 'forward_input', 'data', 0, 'loss_fn_inputs', 'target_tokens', 'dtype'],
      msg: "Input should be 'int64' or 'float32'",
    });
    expect(apiError(() => decodeForwardJson('forward', { forward_input: {} })).issues?.map((i) => i.loc)).toEqual([
      ['body', 'forward_input', 'data'],
      ['body', 'forward_input', 'loss_fn'],
      ['body', 'model_id'],
    ]);
  });

  it('lists at most 20 schema issues', () => {
    const datum = { ...sdkDatum, model_input: { chunks: [{ tokens: ['x'], type: 'encoded_text' }] } };
    const bad = jsonBody('forward_backward', {
      data: Array.from({ length: 500 }, () => datum),
      loss_fn: 'cross_entropy',
    });
    expect(apiError(() => decodeForwardJson('forward_backward', bad)).issues).toHaveLength(20);
  });

  const withInputs = (inputs: Record<string, unknown>, loss = 'cross_entropy', tokens = [5, 6, 7]) =>
    jsonBody('forward_backward', {
      data: [sdkDatum, { loss_fn_inputs: inputs, model_input: { chunks: [{ tokens, type: 'encoded_text' }] } }],
      loss_fn: loss,
    });

  it.each([
    [
      'an unknown loss',
      jsonBody('forward_backward', { data: [sdkDatum], loss_fn: 'dpo' }),
      "unknown loss_fn 'dpo': this server computes cross_entropy, importance_sampling, ppo, cispo, dro",
    ],
    ['no datum', jsonBody('forward_backward', { data: [], loss_fn: 'ppo' }), 'data is empty: send at least one datum'],
    [
      'an image chunk',
      jsonBody('forward_backward', {
        data: [
          {
            ...sdkDatum,
            model_input: {
              chunks: [
                { tokens: [1], type: 'encoded_text' },
                { data: 'iVBORw==', format: 'png', type: 'image' },
              ],
            },
          },
        ],
        loss_fn: 'cross_entropy',
      }),
      "this server trains text models: datum 0's model_input has an image chunk; send encoded_text chunks (token ids)",
    ],
    [
      'an image asset pointer',
      jsonBody('forward_backward', {
        data: [
          {
            ...sdkDatum,
            model_input: { chunks: [{ format: 'png', location: 's3://x', type: 'image_asset_pointer' }] },
          },
        ],
        loss_fn: 'cross_entropy',
      }),
      "datum 0's model_input has an image chunk (image_asset_pointer)",
    ],
    [
      'a missing target',
      withInputs({ weights: { data: [1, 1, 1], dtype: 'float32' } }),
      'datum 1: loss_fn_inputs.target_tokens is missing; cross_entropy needs target_tokens',
    ],
    [
      'missing RL inputs',
      withInputs(
        { target_tokens: { data: [1, 2, 3], dtype: 'int64' }, logprobs: { data: [0, 0, 0], dtype: 'float32' } },
        'importance_sampling',
      ),
      'datum 0: loss_fn_inputs.logprobs is missing; importance_sampling needs target_tokens, logprobs, advantages',
    ],
    [
      'a fractional target',
      withInputs({ target_tokens: { data: [1, 2.5, 3], dtype: 'int64' } }),
      'datum 1: loss_fn_inputs.target_tokens[1] is 2.5, not a token id (0 ≤ id < 2^31)',
    ],
    [
      'a negative target',
      withInputs({ target_tokens: { data: [1, -2, 3], dtype: 'int64' } }),
      'datum 1: loss_fn_inputs.target_tokens[1] is -2, not a token id',
    ],
    [
      'a weight beyond float32',
      withInputs({
        target_tokens: { data: [1, 2, 3], dtype: 'int64' },
        weights: { data: [1, 1e39, 1], dtype: 'float32' },
      }),
      'datum 1: loss_fn_inputs.weights[1] is Infinity; inputs must be finite float32 values',
    ],
    [
      'shapes that disagree',
      withInputs({
        target_tokens: { data: [1, 2, 3], dtype: 'int64' },
        weights: { data: [1, 1, 1, 1, 1, 1], dtype: 'float32', shape: [3, 2] },
      }),
      "datum 1: loss_fn_inputs.weights has shape [3, 2]; it must match target_tokens' shape [3]",
    ],
    [
      'a 3-D tensor',
      withInputs({ target_tokens: { data: [1, 2, 3], dtype: 'int64', shape: [3, 1, 1] } }),
      'datum 1: loss_fn_inputs.target_tokens has shape [3, 1, 1]; inputs have 1 dimension, or 2 for (N, K) targets',
    ],
    [
      'a shape of many dimensions',
      withInputs({ target_tokens: { data: [1, 2, 3], dtype: 'int64', shape: [3, ...Array(19).fill(1)] } }),
      'datum 1: loss_fn_inputs.target_tokens has shape [3, 1, 1, 1, … 20 dimensions]; inputs have 1 dimension',
    ],
    [
      'a zero K',
      withInputs({ target_tokens: { data: [], dtype: 'int64', shape: [3, 0] } }),
      'datum 1: loss_fn_inputs.target_tokens has shape [3, 0]; K must be 1 or more',
    ],
    [
      'data that does not fill the shape',
      withInputs({ target_tokens: { data: [1, 2], dtype: 'int64', shape: [3] } }),
      'datum 1: loss_fn_inputs.target_tokens has 2 values, but its shape [3] needs 3',
    ],
    [
      'half a CSR',
      withInputs({ target_tokens: { data: [1], dtype: 'int64', shape: [3, 2], sparse_crow_indices: [0, 1, 1, 1] } }),
      'datum 1: loss_fn_inputs.target_tokens has only one of sparse_crow_indices and sparse_col_indices',
    ],
    [
      'an unknown input',
      withInputs({
        target_tokens: { data: [1, 2, 3], dtype: 'int64' },
        advantage: { data: [1, 2, 3], dtype: 'float32' },
      }),
      "datum 1: unknown loss_fn_inputs 'advantage'; the inputs are target_tokens, weights, logprobs, advantages, clip_low_threshold, clip_high_threshold",
    ],
    [
      'a weight of dtype int64',
      withInputs({ target_tokens: { data: [1, 2, 3], dtype: 'int64' }, weights: { data: [1, 1, 1], dtype: 'int64' } }),
      'datum 1: loss_fn_inputs.weights has dtype int64; it must be float32',
    ],
    [
      'an empty model input',
      withInputs({ target_tokens: { data: [], dtype: 'int64' } }, 'cross_entropy', []),
      'datum 1: model_input has no tokens',
    ],
  ])('refuses %s with a 400 naming the datum and field', (_what, request, message) => {
    const err = apiError(() => decodeForwardJson('forward_backward', request));
    expect(err.status).toBe(400);
    expect(err.message).toContain(message);
  });

  it('refuses more datums than a request may hold', () => {
    const one = {
      loss_fn_inputs: { target_tokens: { data: [2], dtype: 'int64' } },
      model_input: { chunks: [{ tokens: [1], type: 'encoded_text' }] },
    };
    const data = Array.from({ length: MAX_DATUMS_PER_REQUEST + 1 }, () => one);
    const err = apiError(() =>
      decodeForwardJson('forward_backward', jsonBody('forward_backward', { data, loss_fn: 'cross_entropy' })),
    );
    expect(err.message).toContain(
      `${MAX_DATUMS_PER_REQUEST + 1} datums in one request; at most ${MAX_DATUMS_PER_REQUEST}`,
    );
    data.pop();
    expect(
      decodeForwardJson('forward_backward', jsonBody('forward_backward', { data, loss_fn: 'cross_entropy' })).payload
        .data,
    ).toHaveLength(MAX_DATUMS_PER_REQUEST);
  });
});
