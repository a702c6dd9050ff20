/**
 * Python's `repr()` / `str()` for the values vLLM interpolates into its error messages. The messages are
 * part of the wire contract (docs/contract.md §8.2: "numbers formatted the Python way"), so `-1` sent as a float field
 * must read `-1.0`, `0.00001` must read `1e-05`, and a list of stop words must read `['a', '']`.
 *
 * JSON (and therefore JavaScript) has no int/float distinction, so callers say which one a field is:
 * `PyFloat` marks a value that Python holds as a float; a bare integral number is printed as an int.
 */

/** A number Python holds as `float`, for use inside lists and dicts given to `pyRepr`. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python `set` literal (the order given is the order printed). */
export class PySet {
  constructor(readonly items: readonly unknown[]) {}
}

/**
 * `repr(float)`: the shortest digits that round-trip (JavaScript and CPython both produce them), in fixed
 * notation when the decimal exponent is in [-4, 16), otherwise in exponent form with a signed exponent of at
 * least two digits (`1e-05`, `1.5e+16`). Fixed notation always carries a decimal point (`3.0`).
 */
export function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e-4 && abs < 1e16) {
    // Where Python prints positional digits, JavaScript does too (it switches to exponents only below 1e-6
    // or from 1e21), with the same shortest round-trip digits; only the ".0" of whole numbers differs.
    const text = String(x);
    return text.includes('.') ? text : `${text}.0`;
  }
  const sign = x < 0 ? '-' : '';
  // toExponential() without an argument yields exactly the shortest round-trip significand.
  const [mantissa, exponentText] = Math.abs(x).toExponential().split('e');
  const exponent = Number(exponentText);
  const digits = mantissa.replace('.', '');
  if (exponent < -4 || exponent >= 16) {
    const significand = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const exp = `${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
    return `${sign}${significand}e${exp}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const intDigits = exponent + 1;
  if (digits.length <= intDigits) return `${sign}${digits.padEnd(intDigits, '0')}.0`;
  return `${sign}${digits.slice(0, intDigits)}.${digits.slice(intDigits)}`;
}

/** `repr(int)`: exact digits of the value, also beyond 2^53 (no `1e+21`). A fractional number falls back to `pyFloat`. */
export function pyInt(x: number | bigint): string {
  if (typeof x === 'bigint') return x.toString();
  if (!Number.isFinite(x) || !Number.isInteger(x)) return pyFloat(x);
  return BigInt(x).toString();
}

// Python's str.isprintable() is false for these categories (the space is the one printable separator).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/** `repr(str)`: single quotes unless the text holds `'` and no `"`; escapes as CPython's unicode_repr. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${hex(code, 2)}`;
    else if (code < 0x7f) out += ch;
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      out += code <= 0xff ? `\\x${hex(code, 2)}` : code <= 0xffff ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
    } else out += ch;
  }
  return out + quote;
}

/**
 * `repr()` of a JSON-like value: None/True/False, ints (integral numbers and bigints), floats (`PyFloat` or a
 * fractional number), strings, lists, dicts (insertion order, `{'k': v}`), and `PySet`.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value instanceof PyFloat) return pyFloat(value.value);
  if (typeof value === 'number' || typeof value === 'bigint') return pyInt(value);
  if (typeof value === 'string') return pyStrRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value instanceof PySet) return value.items.length ? `{${value.items.map(pyRepr).join(', ')}}` : 'set()';
  if (value instanceof Map) {
    return `{${[...value.entries()].map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  }
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyStrRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return pyStrRepr(String(value));
}

/** `str()`: a string prints bare (as in an f-string), anything else as its repr. */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Python truthiness of a decoded JSON value, for vLLM's `if data.get(...)` validators. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
