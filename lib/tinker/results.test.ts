import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import { pyJsonLoads, type PyJson } from '@/lib/inference/python-json';
import { ProtoReader } from './proto-wire';
import {
  forwardResultJson,
  forwardResultProto,
  sampleResultJson,
  sampleResultProto,
  TOPK_MASK_LOGPROB,
} from './results';
import { float32s, int32s, int64sAsNumbers, wireTensorFromArray } from './tensors';
import type { ForwardResult, SampleResult, WireTensor } from './types';

const FIXTURES = path.resolve(import.meta.dirname, '../../tests/fixtures/tinker');

/** results.json keeps non-finite floats as strings (strict JSON); these revive them. */
const NON_FINITE: Record<string, number> = { __nan__: NaN, __inf__: Infinity, '__-inf__': -Infinity };
const cases = JSON.parse(readFileSync(path.join(FIXTURES, 'results.json'), 'utf8'), (_k, v) =>
  typeof v === 'string' && v in NON_FINITE ? NON_FINITE[v] : v,
) as {
  forward: Record<string, { result: ForwardResult; proto: string }>;
  sample: Record<string, { result: SampleResult; proto: string }>;
};

/** A JSON value as Python's json.loads reads it (NaN and Infinity literals included), as plain JS values. */
function py(text: string): unknown {
  const plain = (v: PyJson): unknown => {
    switch (v.kind) {
      case 'null':
        return null;
      case 'int':
        return Number(v.value);
      case 'list':
        return v.items.map(plain);
      case 'dict':
        return Object.fromEntries(v.entries.map(([k, x]) => [k, plain(x)]));
      default:
        return v.value;
    }
  };
  return plain(pyJsonLoads(text));
}

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err;
  }
  throw new Error('did not throw');
}

describe('the protobuf runtime’s own encodings (scripts/tinker-proto-fixtures.py)', () => {
  it.each(Object.entries(cases.forward))('ForwardBackwardOutput %s: byte for byte', (_name, c) => {
    expect(Buffer.from(forwardResultProto(c.result)).toString('base64')).toBe(c.proto);
  });

  it.each(Object.entries(cases.sample))('SampleResponse %s: byte for byte', (_name, c) => {
    expect(Buffer.from(sampleResultProto(c.result)).toString('base64')).toBe(c.proto);
  });
});

/** The ArrayRecords of a ForwardBackwardOutput: num_datums and, per field, dtype and trailing shape. */
function records(bytes: Uint8Array) {
  const out: {
    num_datums: number;
    fields: Record<string, { dtype: number; trailing: number[]; offsets: number[] }>;
  }[] = [];
  const r = ProtoReader.of(bytes, 'ForwardBackwardOutput');
  while (r.next()) {
    if (r.field !== 2) {
      r.skip();
      continue;
    }
    const record = r.message('loss_fn_outputs');
    const rec = { num_datums: 0, fields: {} as (typeof out)[number]['fields'] };
    while (record.next()) {
      if (record.field === 3) rec.num_datums = record.int64('num_datums');
      else if (record.field === 2) {
        const entry = record.message('fields');
        let name = '';
        const field = { dtype: 0, trailing: [] as number[], offsets: [] as number[] };
        while (entry.next()) {
          if (entry.field === 1) name = entry.string('key');
          else {
            const bt = entry.message('value');
            while (bt.next()) {
              if (bt.field === 2) field.offsets = Array.from(int64sAsNumbers(bt.bytes('offsets').slice()));
              else if (bt.field === 3) field.dtype = bt.int32('dtype');
              else if (bt.field === 4) bt.int64s('trailing_shape', field.trailing);
              else bt.skip();
            }
          }
        }
        rec.fields[name] = field;
      } else record.skip();
    }
    out.push(rec);
  }
  return out;
}

const lp = (shape: number[], start = -1) =>
  wireTensorFromArray(
    Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => start - i / 8),
    shape,
  );

describe('forwardResultProto', () => {
  it('writes one ArrayRecord per run of datums with the same trailing shapes', () => {
    const result: ForwardResult = {
      loss_fn_outputs: [[4, 3], [2, 3], [5, 2], [1, 2], [3, 3], [2]].map((shape) => ({ logprobs: lp(shape) })),
      metrics: { 'loss:sum': 1 },
    };
    const got = records(forwardResultProto(result));
    expect(got.map((r) => [r.num_datums, r.fields.logprobs.trailing])).toEqual([
      [2, [3]],
      [2, [2]],
      [1, [3]],
      [1, []],
    ]);
    // int64 byte offsets, num_datums + 1 of them
    expect(got[0].fields.logprobs.offsets).toEqual([0, 48, 72]);
    expect(got[3].fields.logprobs.offsets).toEqual([0, 8]);
  });

  it('splits a run where a field changes dtype, and keeps int32 and int64 outputs as such', () => {
    const ids = (xs: number[]): WireTensor => ({
      dtype: 'int64',
      shape: [xs.length],
      data: Buffer.from(BigInt64Array.from(xs.map(BigInt)).buffer).toString('base64'),
    });
    const result: ForwardResult = {
      loss_fn_outputs: [
        { ids: ids([1, 2]), lp: lp([2]) },
        { ids: wireTensorFromArray(Int32Array.from([3]), [1]), lp: lp([1]) },
      ],
      metrics: {},
    };
    const got = records(forwardResultProto(result));
    expect(got.map((r) => [r.num_datums, r.fields.ids.dtype, r.fields.lp.dtype])).toEqual([
      [1, 2, 1],
      [1, 3, 1],
    ]);
    expect(py(forwardResultJson(result))).toEqual({
      loss_fn_output_type: 'ArrayRecord',
      loss_fn_outputs: [
        { ids: { data: [1, 2], dtype: 'int64', shape: [2] }, lp: { data: [-1, -1.125], dtype: 'float32', shape: [2] } },
        { ids: { data: [3], dtype: 'int64', shape: [1] }, lp: { data: [-1], dtype: 'float32', shape: [1] } },
      ],
      metrics: {},
    });
  });

  it('never sends the dashboard stats', () => {
    const result: ForwardResult = {
      loss_fn_outputs: [{ logprobs: lp([2]) }],
      metrics: { 'loss:sum': 2 },
      stats: { secret_stat: 1 },
    };
    expect(Buffer.from(forwardResultProto(result)).toString('latin1')).not.toContain('secret_stat');
    expect(forwardResultJson(result)).not.toContain('secret_stat');
  });

  it('refuses results the SDK could not read, with a 500', () => {
    const differentFields: ForwardResult = {
      loss_fn_outputs: [{ logprobs: lp([1]) }, { other: lp([1]) }],
      metrics: {},
    };
    expect(apiError(() => forwardResultProto(differentFields)).message).toBe(
      'forward result: datum 1 has other output fields than datum 0 (logprobs)',
    );
    const short: ForwardResult = { loss_fn_outputs: [{ logprobs: { ...lp([2]), shape: [3] } }], metrics: {} };
    const err = apiError(() => forwardResultJson(short));
    expect(err.status).toBe(500);
    expect(err.message).toBe(
      'forward result datum 0 logprobs is not a valid tensor: 8 bytes of data for shape [3] of float32',
    );
    expect(apiError(() => forwardResultProto({ loss_fn_outputs: [], metrics: { x: 'y' as never } })).status).toBe(500);
  });
});

describe('float32 logprobs round trip', () => {
  const values = Float32Array.from([-0.6931471824645996, -1e-8, -87.33654, -Infinity, NaN, -0, -3.4028234663852886e38]);
  const result: ForwardResult = {
    loss_fn_outputs: [{ logprobs: wireTensorFromArray(values, [values.length]) }],
    metrics: {},
  };

  it('JSON: Python reads back the same float32 values, NaN and -Infinity included', () => {
    const doc = py(forwardResultJson(result)) as { loss_fn_outputs: { logprobs: { data: number[] } }[] };
    const back = Float32Array.from(doc.loss_fn_outputs[0].logprobs.data);
    expect(new Uint32Array(back.buffer)).toEqual(new Uint32Array(values.buffer));
    expect(forwardResultJson(result)).toContain(
      '"data":[-0.6931472,-1e-8,-87.33654,-Infinity,NaN,-0.0,-3.4028235e+38]',
    );
  });

  it('protobuf: the same bytes', () => {
    const [record] = records(forwardResultProto(result));
    expect(record.fields.logprobs.offsets).toEqual([0, 28]);
    const r = ProtoReader.of(forwardResultProto(result), 'ForwardBackwardOutput');
    let data = new Uint8Array(0);
    while (r.next()) {
      if (r.field !== 2) r.skip();
      else {
        const rec = r.message('record');
        while (rec.next()) {
          if (rec.field !== 2) rec.skip();
          else {
            const entry = rec.message('entry');
            while (entry.next()) {
              if (entry.field !== 2) entry.skip();
              else {
                const bt = entry.message('bt');
                while (bt.next())
                  if (bt.field === 1) data = bt.bytes('data').slice();
                  else bt.skip();
              }
            }
          }
        }
      }
    }
    expect(new Uint32Array(float32s(data).slice().buffer)).toEqual(new Uint32Array(values.buffer));
  });
});

describe('SampleResponse', () => {
  const result: SampleResult = {
    sequences: [
      { stop_reason: 'length', tokens: [5, 6], logprobs: [-0.25, -Infinity] },
      { stop_reason: 'stop', tokens: [], logprobs: [] },
    ],
    prompt_logprobs: [null, -1.5, 0.1],
    topk_prompt_logprobs: [
      null,
      [
        [4, -0.5],
        [9, -1],
      ],
      [],
      [[2, -2]],
    ],
  };

  it('JSON: null for the positions without a value, [id, logprob] pairs, no cache hits', () => {
    // The result's own shape is the wire's: nulls, [id, logprob] pairs and -Infinity survive the round trip.
    expect(py(sampleResultJson(result))).toEqual({ type: 'sample', ...result, prompt_cache_hit_tokens: 0 });
    expect(py(sampleResultJson({ ...result, prompt_logprobs: null, topk_prompt_logprobs: null }))).toMatchObject({
      prompt_logprobs: null,
      topk_prompt_logprobs: null,
    });
  });

  it('protobuf: NaN for a missing prompt logprob, sentinel-filled top-k matrices', () => {
    const r = ProtoReader.of(sampleResultProto(result), 'SampleResponse');
    const seen: Record<string, unknown> = {};
    const sequences: unknown[] = [];
    while (r.next()) {
      if (r.field === 1) {
        const s = r.message('sequences');
        const seq: Record<string, unknown> = { stop_reason: 0, tokens: [] };
        while (s.next()) {
          if (s.field === 1) seq.stop_reason = s.int32('stop_reason');
          else if (s.field === 2) seq.tokens = Array.from(int32s(s.bytes('tokens').slice()));
          else seq.logprobs = Array.from(float32s(s.bytes('logprobs').slice()));
        }
        sequences.push(seq);
      } else if (r.field === 2) seen.prompt = Array.from(float32s(r.bytes('prompt_logprobs').slice()));
      else if (r.field === 3) {
        const t = r.message('topk');
        while (t.next()) {
          if (t.field === 1) seen.ids = Array.from(int32s(t.bytes('token_ids').slice()));
          else if (t.field === 2) seen.lps = Array.from(float32s(t.bytes('logprobs').slice()));
          else if (t.field === 3) seen.k = t.uint('k');
          else seen.rows = t.uint('prompt_length');
        }
      } else r.skip();
    }
    expect(sequences).toEqual([
      { stop_reason: 1, tokens: [5, 6], logprobs: [-0.25, -Infinity] },
      { stop_reason: 0, tokens: [], logprobs: [] },
    ]);
    expect(seen).toEqual({
      prompt: [NaN, -1.5, Math.fround(0.1)],
      ids: [0, 0, 4, 9, 0, 0, 2, 0],
      lps: [
        TOPK_MASK_LOGPROB,
        TOPK_MASK_LOGPROB,
        -0.5,
        -1,
        TOPK_MASK_LOGPROB,
        TOPK_MASK_LOGPROB,
        -2,
        TOPK_MASK_LOGPROB,
      ],
      k: 2,
      rows: 4,
    });
  });

  it('refuses a result the SDK could not read, with a 500', () => {
    const bad = (over: Partial<SampleResult['sequences'][number]>) =>
      apiError(() =>
        sampleResultProto({ ...result, sequences: [{ stop_reason: 'stop', tokens: [1], logprobs: [0], ...over }] }),
      );
    expect(bad({ logprobs: [] }).message).toBe('sample result: sequence 0 has 0 logprobs for 1 tokens');
    expect(bad({ tokens: [-1] }).status).toBe(500);
    expect(bad({ stop_reason: 'eos' as never }).message).toContain("stop_reason 'eos'");
  });
});
