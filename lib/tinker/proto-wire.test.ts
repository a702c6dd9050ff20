import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import { MAX_PROTO_DEPTH, ProtoReader, ProtoWriter } from './proto-wire';

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

function bytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
}

/** The message ApiError a read of `data` throws (with `read` doing the reading). */
function failure(data: Uint8Array, read: (r: ProtoReader) => void): string {
  try {
    read(ProtoReader.of(data, 'Msg'));
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error('read did not fail');
}

/** Reads every field of `data` as field 1 = int64, 2 = string, else skipped. */
function readAll(r: ProtoReader): unknown[] {
  const out: unknown[] = [];
  while (r.next()) {
    if (r.field === 1) out.push(r.int64('a'));
    else if (r.field === 2) out.push(r.string('b'));
    else r.skip();
  }
  return out;
}

describe('varints', () => {
  // Encodings as the protobuf runtime (upb) writes them: negative numbers as 10-byte two's complement.
  const cases: [number, string][] = [
    [0, '00'],
    [1, '01'],
    [127, '7f'],
    [128, '8001'],
    [300, 'ac02'],
    [2 ** 31 - 1, 'ffffffff07'],
    [2 ** 32, '8080808010'],
    [2 ** 53 - 1, 'ffffffffffffff0f'],
    [-1, 'ffffffffffffffffff01'],
    [-2, 'feffffffffffffffff01'],
    [-(2 ** 31), '80808080f8ffffffff01'],
    [-(2 ** 32), '80808080f0ffffffff01'],
    [-(2 ** 53 - 1), '81808080808080f0ff01'],
  ];

  it.each(cases)('writes and reads %d', (value, encoded) => {
    const w = new ProtoWriter();
    w.int(1, value);
    expect(hex(w.finish())).toBe(`08${encoded}`);
    const r = ProtoReader.of(bytes(`08${encoded}`), 'Msg');
    expect(r.next()).toBe(true);
    expect(r.int64('v')).toBe(value);
    expect(r.next()).toBe(false);
  });

  it('reads int32 as the low 32 bits, signed, and uint32 / uint64 unsigned', () => {
    const r = ProtoReader.of(bytes('08 feffffffffffffffff01  08 ffffffff0f  08 ffffffffffffff0f'), 'Msg');
    r.next();
    expect(r.int32('a')).toBe(-2);
    r.next();
    expect(r.int32('a')).toBe(-1);
    r.next();
    expect(r.uint('a')).toBe(2 ** 53 - 1);
  });

  it('refuses integers beyond 2^53 with the field named', () => {
    expect(failure(bytes('08 8080808080808010'), (r) => (r.next(), r.uint('big')))).toBe(
      'malformed protobuf body at Msg.big: an integer beyond 2^53',
    );
    expect(failure(bytes('08 ffffffffffffffff7f'), (r) => (r.next(), r.int64('big')))).toContain('beyond 2^53');
    expect(failure(bytes('08 80808080808080e0ff01'), (r) => (r.next(), r.int64('big')))).toContain('beyond -2^53');
  });

  it('refuses a varint longer than 10 bytes, and a truncated one', () => {
    expect(failure(bytes('08 ffffffffffffffffffff01'), (r) => (r.next(), r.int64('v')))).toContain(
      'longer than 10 bytes',
    );
    expect(failure(bytes('08 ff'), (r) => (r.next(), r.int64('v')))).toBe(
      'malformed protobuf body at Msg.v: truncated varint',
    );
  });
});

describe('fields', () => {
  it('round-trips every kind the writer writes', () => {
    const sub = new ProtoWriter();
    sub.string(1, 'naïve ✓');
    const w = new ProtoWriter();
    w.double(1, -0.1);
    w.bytes(2, new Uint8Array(1000).fill(7));
    w.message(3, sub);
    w.packedInts(4, [3, -1, 2 ** 40]);
    w.int(5, 1);
    const r = ProtoReader.of(w.finish(), 'Msg');
    const got: unknown[] = [];
    while (r.next()) {
      if (r.field === 1) got.push(r.double('d'));
      else if (r.field === 2) got.push(r.bytes('b').length);
      else if (r.field === 3) {
        const m = r.message('m');
        m.next();
        got.push(m.string('s'));
        expect(m.next()).toBe(false);
      } else if (r.field === 4) {
        const shape: number[] = [];
        r.int64s('shape', shape);
        got.push(shape);
      } else got.push(r.bool('flag'));
    }
    expect(got).toEqual([-0.1, 1000, 'naïve ✓', [3, -1, 2 ** 40], true]);
  });

  it('reads repeated ints packed and unpacked, mixed', () => {
    // field 4: packed [1, 2], then unpacked 3, then packed [-1]
    const r = ProtoReader.of(bytes('22 02 01 02  20 03  22 0a ffffffffffffffffff01'), 'Msg');
    const out: number[] = [];
    while (r.next()) r.int64s('shape', out);
    expect(out).toEqual([1, 2, 3, -1]);
    const r32 = ProtoReader.of(bytes('0a 03 01 7f 02  08 05'), 'Msg');
    const out32: number[] = [];
    while (r32.next()) r32.int32s('values', out32);
    expect(out32).toEqual([1, 127, 2, 5]);
  });

  it('reads float fields', () => {
    const r = ProtoReader.of(bytes('1d 0000c03f'), 'Msg');
    r.next();
    expect(r.float('f')).toBe(1.5);
  });

  it('skips unknown fields of every wire type, groups nested in groups included', () => {
    const data = bytes(
      [
        '08 05', // 1: int64 5
        'f8 07 b960', // 127: varint
        'f9 07 0000000000000840', // 127: fixed64
        'fa 07 03 616263', // 127: bytes
        'fb 07  08 01  83 08 8d 08 00000000 84 08  fc 07', // 127: group { 1: 1, 128: group { 129: fixed32 } }
        'fd 07 0000803f', // 127: fixed32
        '12 02 6869', // 2: "hi"
      ].join(''),
    );
    expect(readAll(ProtoReader.of(data, 'Msg'))).toEqual([5, 'hi']);
  });

  it('names the field whose wire type is wrong', () => {
    expect(failure(bytes('10 01'), (r) => (r.next(), r.string('model_id')))).toBe(
      'malformed protobuf body at Msg.model_id: arrived as varint, expected length-delimited (field 2)',
    );
    expect(failure(bytes('0a 00'), (r) => (r.next(), r.double('x')))).toContain('expected fixed64');
  });

  it('refuses lengths past the end, also inside a sub-message and a packed run', () => {
    expect(failure(bytes('0a 05 6869'), (r) => (r.next(), r.bytes('data')))).toBe(
      'malformed protobuf body at Msg.data: truncated: a length of 5 bytes, 2 left',
    );
    // The sub-message is 3 bytes long; its string claims 4.
    const nested = failure(bytes('1a 03 0a 04 61'), (r) => {
      r.next();
      const m = r.message('data[0]');
      m.next();
      m.string('key');
    });
    expect(nested).toBe('malformed protobuf body at Msg.data[0].key: truncated: a length of 4 bytes, 1 left');
    expect(failure(bytes('22 02 01 80'), (r) => (r.next(), r.int64s('shape', [])))).toContain('truncated varint');
    // The packed run is 2 bytes, its second varint needs a third.
    expect(failure(bytes('22 02 01 80  01'), (r) => (r.next(), r.int64s('shape', [])))).toContain(
      'runs past its field',
    );
    expect(failure(bytes('09 0102'), (r) => (r.next(), r.double('d')))).toContain('truncated: 8 bytes announced');
  });

  it('refuses invalid tags and unbalanced groups', () => {
    expect(failure(bytes('00'), (r) => r.next())).toContain('a field number 0');
    expect(failure(bytes('0e'), (r) => r.next())).toContain('invalid wire type 6');
    expect(failure(bytes('0c'), (r) => r.next())).toContain('field 1 ends a group that was never started');
    expect(failure(bytes('0b 08 01'), (r) => (r.next(), r.skip()))).toContain('group 1 is not closed');
    expect(failure(bytes('0b 14'), (r) => (r.next(), r.skip()))).toContain('group 2 closed where another');
    expect(failure(bytes('ffffffffff01'), (r) => r.next())).toContain('past 32 bits');
  });

  it('bounds group nesting', () => {
    const deep = new Uint8Array(10_000).fill(0x0b); // field 1, start group, again and again
    expect(failure(deep, (r) => (r.next(), r.skip()))).toContain(`groups nested more than ${MAX_PROTO_DEPTH} deep`);
    let shallow = '';
    for (let i = 0; i < MAX_PROTO_DEPTH; i++) shallow += '2b'; // field 5, start group
    for (let i = 0; i < MAX_PROTO_DEPTH; i++) shallow += '2c';
    expect(readAll(ProtoReader.of(bytes(`${shallow}0801`), 'Msg'))).toEqual([1]);
  });

  it('bounds sub-message nesting', () => {
    // A reader nested past the bound refuses itself, whatever reads it.
    let data = bytes('0801');
    for (let i = 0; i <= MAX_PROTO_DEPTH; i++) {
      const w = new ProtoWriter();
      w.bytes(3, data);
      data = w.finish();
    }
    const descend = (r: ProtoReader): void => {
      while (r.next()) {
        if (r.field === 3) descend(r.message('m'));
        else r.skip();
      }
    };
    expect(failure(data, descend)).toContain(`messages nested more than ${MAX_PROTO_DEPTH} deep`);
  });

  it('refuses strings that are not UTF-8', () => {
    expect(failure(bytes('12 02 c328'), (r) => (r.next(), r.string('name')))).toBe(
      'malformed protobuf body at Msg.name: a string that is not UTF-8',
    );
  });
});

describe('ProtoWriter', () => {
  it('writes large and small byte fields, nested messages and packed ints in order', () => {
    const inner = new ProtoWriter();
    inner.bytes(1, new Uint8Array(600).fill(1));
    inner.int(2, 3);
    const w = new ProtoWriter();
    w.string(1, 'x');
    w.message(2, inner);
    w.packedInts(3, []);
    w.packedInts(4, [1, 300]);
    const out = w.finish();
    expect(out.length).toBe(w.length);
    // 1: "x" | 2: 605 bytes { 1: 600 bytes (d8 04) … | 2: 3 } | 4: packed [1, 300]; the empty field 3 is left out.
    expect(hex(out.subarray(0, 8))).toBe('0a0178' + '12dd04' + '0ad8');
    expect(hex(out.subarray(out.length - 8))).toBe('01' + '1003' + '2203' + '01ac02');
  });

  it('refuses what it cannot write', () => {
    const w = new ProtoWriter();
    expect(() => w.int(1, 1.5)).toThrow(ApiError);
    expect(() => w.packedInts(1, [2 ** 60])).toThrow('not a safe integer');
  });
});
