import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import {
  elementCount,
  float32Json,
  float32s,
  float64Json,
  int32s,
  int64Base64,
  int64sAsNumbers,
  wireTensorFromArray,
  wireTensorToArray,
} from './tensors';

/** The shortest toPrecision text that reads back as the float32 v: what float32Json must not be longer than. */
function shortest(v: number): string {
  for (let p = 1; p <= 9; p++) {
    const text = v.toPrecision(p);
    if (Math.fround(Number(text)) === v) return text;
  }
  throw new Error(`no round trip for ${v}`);
}

function digitsOf(text: string): number {
  return text.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
}

describe('float32Json', () => {
  it.each([
    [0.1, '0.1'],
    [-0.6931471824645996, '-0.6931472'],
    [0.5, '0.5'],
    [1, '1.0'],
    [-99999, '-99999.0'],
    [1234567, '1234567.0'],
    [1e-7, '1e-7'],
    [1.5e-9, '1.5e-9'],
    [0.00012, '0.00012'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [1e-45, '1e-45'],
    [0, '0.0'],
    [-0, '-0.0'],
    [NaN, 'NaN'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
  ])('writes %d as %s', (value, text) => {
    expect(float32Json(Math.fround(value))).toBe(text);
  });

  it('reads back exactly, in at most as many digits as the shortest round trip, for 50,000 random float32s', () => {
    const bits = new Uint32Array(50_000);
    let seed = 12345;
    for (let i = 0; i < bits.length; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      bits[i] = (seed ^ (seed >>> 11) ^ Math.imul(i, 2654435761)) >>> 0;
    }
    const values = new Float32Array(bits.buffer);
    let checked = 0;
    for (const v of values) {
      if (Number.isNaN(v)) continue;
      const text = float32Json(v);
      expect(JSON.parse(text)).toBeTypeOf('number');
      if (Math.fround(Number(text)) !== v) throw new Error(`${v} written as ${text}`);
      if (digitsOf(text) > digitsOf(shortest(v))) throw new Error(`${v} written as ${text}, ${shortest(v)} is shorter`);
      checked++;
    }
    expect(checked).toBeGreaterThan(49_000);
  });

  it('reads back exactly around every power of ten', () => {
    for (let e = -45; e <= 38; e++)
      for (const v of [
        Math.fround(10 ** e),
        Math.fround(10 ** e * (1 + 2 ** -23)),
        Math.fround(10 ** e * (1 - 2 ** -24)),
      ])
        if (v !== 0 && Number.isFinite(v)) expect(Math.fround(Number(float32Json(v)))).toBe(v);
  });
});

describe('float64Json', () => {
  it('writes doubles as themselves and non-finite values as the literals Python reads', () => {
    expect([1e300, -0.1, 5e-324, NaN, -Infinity].map(float64Json)).toEqual([
      '1e+300',
      '-0.1',
      '5e-324',
      'NaN',
      '-Infinity',
    ]);
  });
});

describe('WireTensor', () => {
  it('round-trips typed arrays through base64', () => {
    const f = wireTensorFromArray(new Float32Array([0.5, -1, 3.25, NaN]), [2, 2]);
    expect(f).toEqual({
      dtype: 'float32',
      shape: [2, 2],
      data: Buffer.from(new Float32Array([0.5, -1, 3.25, NaN]).buffer).toString('base64'),
    });
    expect(Array.from(wireTensorToArray(f))).toEqual([0.5, -1, 3.25, NaN]);
    const i = wireTensorFromArray(new Int32Array([7, -8]), [2]);
    expect(i.dtype).toBe('int32');
    expect(Array.from(wireTensorToArray(i))).toEqual([7, -8]);
  });

  it('writes int64 as little-endian pairs and reads them back as numbers', () => {
    const t = { dtype: 'int64' as const, shape: [3], data: int64Base64([1, 2 ** 31 - 1, -5]) };
    expect(Buffer.from(t.data, 'base64').toString('hex')).toBe(
      '0100000000000000' + 'ffffff7f00000000' + 'fbffffffffffffff',
    );
    expect(Array.from(wireTensorToArray(t))).toEqual([1, 2 ** 31 - 1, -5]);
    const big = new Uint8Array(new BigInt64Array([2n ** 40n, -(2n ** 52n)]).buffer);
    expect(Array.from(int64sAsNumbers(big))).toEqual([2 ** 40, -(2 ** 52)]);
  });

  it('reads a Node Buffer at an odd offset, as request bodies come (Buffer.slice is a view, not a copy)', () => {
    const floats = Buffer.alloc(9);
    floats.writeFloatLE(1.5, 1);
    floats.writeFloatLE(-2, 5);
    expect(Array.from(float32s(floats.subarray(1)))).toEqual([1.5, -2]);
    const ints = Buffer.alloc(9);
    ints.writeInt32LE(7, 1);
    ints.writeInt32LE(-8, 5);
    expect(Array.from(int32s(ints.subarray(1)))).toEqual([7, -8]);
  });

  it('reads values from an unaligned base64 buffer', () => {
    // Small base64 strings decode into Buffer's shared pool at any offset.
    for (let n = 1; n < 12; n++) {
      const values = Float32Array.from({ length: n }, (_, j) => j / 3);
      const t = wireTensorFromArray(values, [n]);
      Buffer.from('x'.repeat(n)); // moves the pool's offset
      expect(wireTensorToArray(t)).toEqual(values);
    }
  });

  it.each([
    [{ dtype: 'float16', shape: [1], data: 'AAA=' }, "unknown dtype 'float16'"],
    [{ dtype: 'float32', shape: [], data: '' }, 'a shape of at least one dimension'],
    [{ dtype: 'float32', shape: [-1], data: '' }, 'is not a list of sizes'],
    [{ dtype: 'float32', shape: [2], data: 'AAAAAA==' }, '4 bytes of data for shape [2] of float32'],
    [
      { dtype: 'int64', shape: [1], data: Buffer.from(new BigInt64Array([2n ** 60n]).buffer).toString('base64') },
      'beyond 2^53',
    ],
  ])('refuses an inconsistent tensor with a 500: %j', (tensor, text) => {
    let err: unknown;
    try {
      wireTensorToArray(tensor as never, 'result');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);
    expect((err as ApiError).message).toContain(text);
  });

  it('counts elements, refusing negative, fractional and too large sizes', () => {
    expect(elementCount([3, 4])).toBe(12);
    expect(elementCount([])).toBe(1);
    expect(elementCount([2, -1])).toBeNull();
    expect(elementCount([1.5])).toBeNull();
    expect(elementCount([2 ** 20, 2 ** 20], 2 ** 30)).toBeNull();
    expect(() => wireTensorFromArray(new Float32Array(3), [2])).toThrow('does not fit its 3 values');
  });
});
