import { pyFloat } from './python-repr';

/**
 * Python's `json.loads` / `json.dumps` where vLLM's output bytes depend on them. The hermes tool parser
 * re-serialises the model's `arguments` with `json.dumps(..., ensure_ascii=False)` (compat §7.12), which keeps
 * key order, tells `1` from `1.0` and spaces items as `{"a": 1, "b": [1, 2]}`; `JSON.parse` loses all three
 * (integer-like keys are even reordered), so the value is parsed into an ordered tree instead.
 */
export type PyJson =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'int'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'str'; value: string }
  | { kind: 'list'; items: PyJson[] }
  | { kind: 'dict'; entries: [string, PyJson][] };

export class PyJsonDecodeError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(`${message}: char ${pos}`);
    this.name = 'PyJsonDecodeError';
  }
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

/** `json.loads(text)` with CPython's defaults: strict strings, NaN/Infinity literals, last duplicate key wins in place. */
export function pyJsonLoads(text: string): PyJson {
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i])) i++;
  };
  const fail = (msg: string): never => {
    throw new PyJsonDecodeError(msg, i);
  };

  const parseString = (): string => {
    i++; // opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) fail('Unterminated string starting at');
      const ch = text[i];
      if (ch === '"') {
        i++;
        return out;
      }
      if (ch === '\\') {
        const esc = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (esc !== undefined && esc in simple) {
          out += simple[esc];
          i += 2;
          continue;
        }
        if (esc === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('Invalid \\uXXXX escape');
          out += String.fromCharCode(parseInt(hex, 16)); // surrogate halves pair up as UTF-16 naturally
          i += 6;
          continue;
        }
        fail('Invalid \\escape');
      }
      if (ch.charCodeAt(0) < 0x20) fail('Invalid control character at');
      out += ch;
      i++;
    }
  };

  const parseValue = (): PyJson => {
    skip();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const entries: [string, PyJson][] = [];
      const index = new Map<string, number>();
      skip();
      if (text[i] === '}') {
        i++;
        return { kind: 'dict', entries };
      }
      for (;;) {
        skip();
        if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
        const key = parseString();
        skip();
        if (text[i] !== ':') fail("Expecting ':' delimiter");
        i++;
        const value = parseValue();
        const at = index.get(key);
        if (at === undefined) {
          index.set(key, entries.length);
          entries.push([key, value]);
        } else entries[at] = [key, value];
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { kind: 'dict', entries };
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (ch === '[') {
      i++;
      const items: PyJson[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return { kind: 'list', items };
      }
      for (;;) {
        items.push(parseValue());
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { kind: 'list', items };
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (ch === '"') return { kind: 'str', value: parseString() };
    for (const [literal, node] of [
      ['null', { kind: 'null' }],
      ['true', { kind: 'bool', value: true }],
      ['false', { kind: 'bool', value: false }],
      ['NaN', { kind: 'float', value: NaN }],
      ['Infinity', { kind: 'float', value: Infinity }],
      ['-Infinity', { kind: 'float', value: -Infinity }],
    ] as const) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return node;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      // Python: a literal with a fraction or exponent is a float (1e400 overflows to inf), otherwise an exact int.
      if (m[1] !== undefined || m[2] !== undefined) return { kind: 'float', value: Number(m[0]) };
      return { kind: 'int', value: BigInt(m[0]) };
    }
    return fail('Expecting value');
  };

  const value = parseValue();
  skip();
  if (i !== text.length) fail('Extra data');
  return value;
}

function dumpsString(s: string): string {
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const ch = s[k];
    const code = s.charCodeAt(k);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function dumpsFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  return pyFloat(x);
}

/** `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators, floats as `repr`, non-ASCII raw. */
export function pyJsonDumps(node: PyJson): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return node.value ? 'true' : 'false';
    case 'int':
      return node.value.toString();
    case 'float':
      return dumpsFloat(node.value);
    case 'str':
      return dumpsString(node.value);
    case 'list':
      return `[${node.items.map(pyJsonDumps).join(', ')}]`;
    case 'dict':
      return `{${node.entries.map(([k, v]) => `${dumpsString(k)}: ${pyJsonDumps(v)}`).join(', ')}}`;
  }
}

/** The tree as plain JavaScript values (ints beyond 2^53 lose precision, as with JSON.parse). */
export function pyJsonToPlain(node: PyJson): unknown {
  switch (node.kind) {
    case 'null':
      return null;
    case 'bool':
    case 'float':
    case 'str':
      return node.value;
    case 'int':
      return Number(node.value);
    case 'list':
      return node.items.map(pyJsonToPlain);
    case 'dict':
      return Object.fromEntries(node.entries.map(([k, v]) => [k, pyJsonToPlain(v)]));
  }
}

const KEY_ORDER = Symbol('wireJson key order');

/**
 * Records the order in which `wireJson` writes `obj`'s keys. JavaScript objects list integer-like keys
 * first and ascending, whatever their insertion order, but vLLM's dicts keyed by token id keep insertion
 * order (prompt_logprobs: the actual token first). The order rides on a symbol, invisible to everything else.
 */
export function withKeyOrder<T extends object>(obj: T, keys: readonly string[]): T {
  Object.defineProperty(obj, KEY_ORDER, { value: [...keys], enumerable: false });
  return obj;
}

/**
 * Compact JSON for response bodies and SSE events (`{"a":1}`, raw UTF-8, as vLLM sends them), except that
 * numbers under the keys in `floatKeys` print as Python floats: vLLM's `logprob` is a float, so a value of
 * exactly 0 or the −9999 floor reads `0.0` / `-9999.0` as on the wire (§7.8). Non-finite numbers become null.
 */
export function wireJson(value: unknown, floatKeys: ReadonlySet<string> = LOGPROB_KEYS): string {
  const write = (v: unknown, key: string | null): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'null';
      return key !== null && floatKeys.has(key) ? pyFloat(v) : JSON.stringify(v);
    }
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map((item) => write(item, null)).join(',')}]`;
    if (typeof v === 'object') {
      const parts: string[] = [];
      const order = (v as { [KEY_ORDER]?: string[] })[KEY_ORDER];
      const entries = order
        ? order.map((k): [string, unknown] => [k, (v as Record<string, unknown>)[k]])
        : Object.entries(v);
      for (const [k, item] of entries) {
        if (item === undefined) continue; // as JSON.stringify: an undefined key is absent
        parts.push(`${JSON.stringify(k)}:${write(item, k)}`);
      }
      return `{${parts.join(',')}}`;
    }
    return 'null';
  };
  return write(value, null);
}

export const LOGPROB_KEYS: ReadonlySet<string> = new Set(['logprob']);
