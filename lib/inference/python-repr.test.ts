import { describe, expect, it } from 'vitest';
import { PyFloat, PySet, pyFloat, pyInt, pyRepr, pyStr, pyStrRepr, pyTruthy } from './python-repr';

describe('pyFloat (CPython repr)', () => {
  it.each([
    [0, '0.0'],
    [-0, '-0.0'],
    [1, '1.0'],
    [-1, '-1.0'],
    [2.5, '2.5'],
    [-2.5, '-2.5'],
    [0.1, '0.1'],
    [0.3, '0.3'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1 / 3, '0.3333333333333333'],
    [100, '100.0'],
    [123456.789, '123456.789'],
    // fixed notation down to 1e-4, exponent form below
    [0.0001, '0.0001'],
    [0.00012, '0.00012'],
    [0.00001, '1e-05'],
    [0.000015, '1.5e-05'],
    [-0.00001, '-1e-05'],
    [1e-7, '1e-07'],
    [1.234e-10, '1.234e-10'],
    [5e-324, '5e-324'],
    // fixed notation below 1e16, exponent form from it
    [1e15, '1000000000000000.0'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [12345678901234567890, '1.2345678901234567e+19'],
    [1e100, '1e+100'],
    [-1e22, '-1e+22'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
    [NaN, 'nan'],
  ])('%s → %s', (x, expected) => {
    expect(pyFloat(x)).toBe(expected);
  });
});

describe('pyInt', () => {
  it('prints exact digits, also past 2^53 and where JS would use exponent form', () => {
    expect(pyInt(0)).toBe('0');
    expect(pyInt(-5)).toBe('-5');
    expect(pyInt(2 ** 63)).toBe('9223372036854775808');
    expect(pyInt(1e21)).toBe('1000000000000000000000');
    expect(pyInt(123n)).toBe('123');
    expect(pyInt(-(2n ** 63n))).toBe('-9223372036854775808');
  });
  it('falls back to float formatting for a fractional number', () => {
    expect(pyInt(1.5)).toBe('1.5');
  });
});

describe('pyStrRepr', () => {
  it.each([
    ['', "''"],
    ['a', "'a'"],
    ["it's", '"it\'s"'],
    ['say "hi"', '\'say "hi"\''],
    ['both \' and "', "'both \\' and \"'"],
    ['back\\slash', "'back\\\\slash'"],
    ['tab\tnew\nline\rret', "'tab\\tnew\\nline\\rret'"],
    ['\x00\x1f\x7f', "'\\x00\\x1f\\x7f'"],
    ['\x85\xa0', "'\\x85\\xa0'"],
    ['é ü 日本 😀', "'é ü 日本 😀'"],
    ['\u200b\u2028', "'\\u200b\\u2028'"],
    ['\ud800', "'\\ud800'"],
    ['\u{e0001}', "'\\U000e0001'"],
  ])('%j', (s, expected) => {
    expect(pyStrRepr(s)).toBe(expected);
  });
});

describe('pyRepr', () => {
  it('lists of strings (bad_words message)', () => {
    expect(pyRepr(['a', ''])).toBe("['a', '']");
    expect(pyRepr([])).toBe('[]');
  });
  it('lists of ints, floats and mixed values', () => {
    expect(pyRepr([5, 100000])).toBe('[5, 100000]');
    expect(pyRepr([new PyFloat(1), new PyFloat(0.5)])).toBe('[1.0, 0.5]');
    expect(pyRepr([1.5, null, true, false, 'x'])).toBe("[1.5, None, True, False, 'x']");
  });
  it('dicts in insertion order with nested values', () => {
    expect(pyRepr({ type: 'function', function: { name: 'f' } })).toBe(
      "{'type': 'function', 'function': {'name': 'f'}}",
    );
    expect(
      pyRepr(
        new Map<string, unknown>([
          ['json', null],
          ['regex', 'a+'],
          ['choice', ['x']],
        ]),
      ),
    ).toBe("{'json': None, 'regex': 'a+', 'choice': ['x']}");
    expect(pyRepr({})).toBe('{}');
  });
  it('sets', () => {
    expect(pyRepr(new PySet(['tokenize']))).toBe("{'tokenize'}");
    expect(pyRepr(new PySet([]))).toBe('set()');
  });
});

describe('pyStr and pyTruthy', () => {
  it('str() prints strings bare and everything else as repr', () => {
    expect(pyStr('auto')).toBe('auto');
    expect(pyStr(5)).toBe('5');
    expect(pyStr(true)).toBe('True');
    expect(pyStr({ type: 'function' })).toBe("{'type': 'function'}");
  });
  it('follows Python truthiness', () => {
    for (const falsy of [null, undefined, false, 0, '', [], {}]) expect(pyTruthy(falsy)).toBe(false);
    for (const truthy of [true, 1, -1, 'x', [0], { a: 1 }]) expect(pyTruthy(truthy)).toBe(true);
  });
});
