import { describe, expect, it } from 'vitest';
import { PyJsonDecodeError, pyJsonDumps, pyJsonLoads, pyJsonToPlain, wireJson } from './python-json';

const roundTrip = (text: string) => pyJsonDumps(pyJsonLoads(text));

describe('pyJsonLoads + pyJsonDumps (json.dumps(json.loads(x), ensure_ascii=False))', () => {
  it('spaces separators like Python', () => {
    expect(roundTrip('{"city":"Paris","days":[1,2]}')).toBe('{"city": "Paris", "days": [1, 2]}');
    expect(roundTrip('{}')).toBe('{}');
    expect(roundTrip('[]')).toBe('[]');
  });
  it('keeps key order, including integer-like keys JavaScript would reorder', () => {
    expect(roundTrip('{"b":1,"10":2,"2":3}')).toBe('{"b": 1, "10": 2, "2": 3}');
  });
  it('keeps the first position and the last value of a duplicate key', () => {
    expect(roundTrip('{"a":1,"b":2,"a":3}')).toBe('{"a": 3, "b": 2}');
  });
  it('tells ints from floats and prints floats as repr', () => {
    expect(roundTrip('[1, 1.0, 1e5, 1E-5, 0.5, -0, -0.0, 12345678901234567890123]')).toBe(
      '[1, 1.0, 100000.0, 1e-05, 0.5, 0, -0.0, 12345678901234567890123]',
    );
    expect(roundTrip('1e400')).toBe('Infinity');
    expect(roundTrip('[NaN, Infinity, -Infinity]')).toBe('[NaN, Infinity, -Infinity]');
  });
  it('writes non-ASCII raw and escapes like Python', () => {
    expect(roundTrip('"caf\\u00e9 日本 \\ud83d\\ude00"')).toBe('"café 日本 😀"');
    expect(roundTrip('"a\\"b\\\\c\\/d\\n\\t\\b\\f\\r\\u0001\\u001f"')).toBe(
      '"a\\"b\\\\c/d\\n\\t\\b\\f\\r\\u0001\\u001f"',
    );
    expect(roundTrip('"\u2028\u007f"')).toBe('"\u2028\u007f"');
  });
  it('handles literals and surrounding whitespace', () => {
    expect(roundTrip(' \n{"a": [true, false, null]}\t ')).toBe('{"a": [true, false, null]}');
  });
  it.each(['', '{', '{"a":1,}', '[1,]', '{a:1}', '01', '"\t"', '"\\x"', '{"a":1} x', "'a'", '1.', '.5', '+1'])(
    'rejects %j',
    (text) => {
      expect(() => pyJsonLoads(text)).toThrow(PyJsonDecodeError);
    },
  );
  it('converts to plain values', () => {
    expect(pyJsonToPlain(pyJsonLoads('{"a":[1,2.5,"x",null,true]}'))).toEqual({ a: [1, 2.5, 'x', null, true] });
  });
});

describe('wireJson', () => {
  it('is compact JSON with raw UTF-8', () => {
    expect(wireJson({ a: 'é\n"', b: [1, 2], c: null, d: true })).toBe('{"a":"é\\n\\"","b":[1,2],"c":null,"d":true}');
  });
  it('prints logprob values as Python floats', () => {
    expect(wireJson({ logprob: 0, x: 0 })).toBe('{"logprob":0.0,"x":0}');
    expect(wireJson({ logprob: -9999 })).toBe('{"logprob":-9999.0}');
    expect(wireJson({ logprob: -0.31 })).toBe('{"logprob":-0.31}');
    expect(wireJson([{ logprob: -1.5e-7 }])).toBe('[{"logprob":-1.5e-07}]');
  });
  it('omits undefined keys and writes non-finite numbers as null', () => {
    expect(wireJson({ a: undefined, b: NaN, c: Infinity })).toBe('{"b":null,"c":null}');
  });
  it('matches JSON.stringify elsewhere', () => {
    const value = { id: 'x', n: [1.5, -2, 1e21], nested: { s: 'a\u0000b' } };
    expect(wireJson(value)).toBe(JSON.stringify(value));
  });
});
