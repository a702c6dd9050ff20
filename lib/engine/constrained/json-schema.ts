import {
  alt,
  call,
  ConstraintCompileError,
  empty,
  GrammarBuilder,
  lit,
  never,
  repeat,
  seq,
  star,
  type Frag,
  type Grammar,
  type GrammarLimits,
} from './grammar';
import { decimalAtLeast, decimalAtMost, integerRange, JSON_INTEGER, JSON_NUMBER } from './numeric';
import {
  allStringsExcept,
  automatonFrag,
  intersect,
  lengthAutomaton,
  regexFrag,
  regexToAutomaton,
  type CharAutomaton,
} from './regex';

/**
 * JSON (any object, or a JSON Schema subset) → grammar. Layout follows xgrammar, vLLM's default
 * structured-output backend: values appear in declared property order, whitespace is allowed around
 * punctuation (bounded here), or, with disable_any_whitespace, never except xgrammar's separators ", " and
 * ": ". Top-level output starts with the value and ends right after it, so the model must stop there.
 */

export interface JsonGrammarOptions {
  /** vLLM's disable_any_whitespace: no free whitespace; separators ", " and ": " (xgrammar's defaults). */
  disableAnyWhitespace?: boolean;
  /** vLLM's disable_additional_properties (see {@link compileJsonSchema} for the default). */
  disableAdditionalProperties?: boolean;
  /** vLLM's whitespace_pattern: a regex that replaces the free-whitespace rule (may only produce JSON whitespace). */
  whitespacePattern?: string | null;
  /** Longest run of free whitespace (default {@link DEFAULT_MAX_WHITESPACE}). */
  maxWhitespace?: number;
  limits?: GrammarLimits;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type SchemaObject = { [k: string]: unknown };
type Schema = boolean | SchemaObject;

const isObject = (v: unknown): v is SchemaObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords that restrict values but that this compiler cannot enforce: refused rather than silently broken. */
const UNSUPPORTED = [
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'contains',
  'minContains',
  'maxContains',
  'minProperties',
  'maxProperties',
  'unevaluatedItems',
  '$dynamicRef',
  '$recursiveRef',
];

const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
type TypeName = (typeof TYPES)[number];

/** xgrammar's set (no \r): the bytes a model may put between tokens. */
const WS_BYTES = new Set([0x20, 0x0a, 0x09]);

/**
 * One space, newline or tab wherever JSON allows whitespace (around `{ } [ ] , :`). xgrammar allows any
 * run (`[ \n\t]*`), and a small or untrained model then spends its whole max_tokens on whitespace and never
 * closes the value; one byte per place still reads naturally (`{"a": 1, "b": [1, 2]}`) and bounds the
 * overhead. A deliberate deviation (docs/vllm-compat.md): `whitespace_pattern` lifts it, and
 * `disable_any_whitespace` removes free whitespace altogether.
 */
export const DEFAULT_MAX_WHITESPACE = 1;
const JSON_WS_BYTES = new Set([0x20, 0x0a, 0x09, 0x0d]);

const FORMATS: Record<string, string> = {
  // Days per month are exact except February, capped at 28 so that every generated date is real.
  date: '[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))',
  time: '(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])',
  uuid: '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  email:
    "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,6}",
  ipv4: '(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])',
  hostname: '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,20}[a-zA-Z0-9])?)*',
};
FORMATS['date-time'] = `${FORMATS.date}T${FORMATS.time}`;

/** Longest maxLength generated exactly for plain strings; a larger maxLength is lowered to it (sound). */
const MAX_STRING_REPEAT = 10_000;
/** Same for strings that also have a pattern or format (their automaton is multiplied by the count). */
const MAX_PATTERN_LENGTH = 1000;
/** Same for arrays (minItems above it is refused). */
const MAX_ITEMS = 2000;

interface Style {
  ws: Frag;
  comma: Frag;
  colon: Frag;
}

class JsonCompiler {
  readonly g: GrammarBuilder;
  private readonly style: Style;
  private readonly memo = new Map<SchemaObject | boolean, number>();
  private anyValueRule = -1;
  private anyStringRule = -1;
  private numberRule = -1;
  private anyCharRule = -1;

  constructor(
    private readonly root: unknown,
    private readonly opts: JsonGrammarOptions,
  ) {
    this.g = new GrammarBuilder(opts.limits);
    this.style = this.makeStyle();
  }

  private makeStyle(): Style {
    if (this.opts.disableAnyWhitespace) return { ws: empty, comma: lit(', '), colon: lit(': ') };
    let wsBody: Frag;
    if (this.opts.whitespacePattern != null) {
      const a = regexToAutomaton(this.opts.whitespacePattern);
      // Only whitespace may come out of it, or the output would stop being JSON.
      for (const node of a.nodes())
        for (const [range] of node.out)
          for (let c = range.min; c <= range.max; c++)
            if (!JSON_WS_BYTES.has(c))
              throw new ConstraintCompileError(
                `whitespace_pattern may only match JSON whitespace, but it allows ${JSON.stringify(String.fromCodePoint(c))}`,
              );
      wsBody = automatonFrag(a, 'raw');
    } else {
      const max = this.opts.maxWhitespace ?? DEFAULT_MAX_WHITESPACE;
      const wsByte: Frag = alt(...[...WS_BYTES].map((c) => lit([c])));
      wsBody = repeat(wsByte, 0, max);
    }
    const ws = call(this.g.rule('ws', wsBody));
    return { ws, comma: seq(ws, lit(','), ws), colon: seq(ws, lit(':'), ws) };
  }

  // ---- generic JSON ----

  anyValue(): number {
    if (this.anyValueRule >= 0) return this.anyValueRule;
    const value = (this.anyValueRule = this.g.declare('any_value'));
    const { ws, comma, colon } = this.style;
    const v = call(value);
    const member = seq(call(this.anyString()), colon, v);
    const object = call(
      this.g.rule('any_object', seq(lit('{'), ws, alt(lit('}'), seq(member, star(seq(comma, member)), ws, lit('}'))))),
    );
    const array = call(
      this.g.rule('any_array', seq(lit('['), ws, alt(lit(']'), seq(v, star(seq(comma, v)), ws, lit(']'))))),
    );
    this.g.define(
      value,
      alt(object, array, call(this.anyString()), call(this.number()), lit('true'), lit('false'), lit('null')),
    );
    return value;
  }

  anyObjectRoot(): number {
    this.anyValue();
    const { ws, comma, colon } = this.style;
    const member = seq(call(this.anyString()), colon, call(this.anyValueRule));
    return this.g.rule(
      'root_object',
      seq(lit('{'), ws, alt(lit('}'), seq(member, star(seq(comma, member)), ws, lit('}')))),
    );
  }

  private anyString(): number {
    if (this.anyStringRule < 0) this.anyStringRule = this.g.rule('string', this.stringFrag(null));
    return this.anyStringRule;
  }

  private anyChar(): number {
    if (this.anyCharRule < 0) this.anyCharRule = this.g.rule('char', automatonFrag(regexToAutomaton('[^]'), 'json'));
    return this.anyCharRule;
  }

  private number(): number {
    if (this.numberRule < 0) this.numberRule = this.g.rule('number', regexFrag(JSON_NUMBER));
    return this.numberRule;
  }

  /** `"` + the characters of the automaton (any string when null), JSON-escaped, + `"`. */
  private stringFrag(a: CharAutomaton | null): Frag {
    return seq(lit('"'), automatonFrag(a ?? regexToAutomaton('[^]*'), 'json'), lit('"'));
  }

  // ---- JSON Schema ----

  compileRoot(): number {
    if (!isObject(this.root) && typeof this.root !== 'boolean')
      throw new ConstraintCompileError('the schema must be a JSON object or a boolean');
    return this.schemaRule(this.root, '#');
  }

  private schemaRule(schema: Schema, path: string): number {
    const hit = this.memo.get(schema);
    if (hit !== undefined) return hit;
    const id = this.g.declare(path);
    this.memo.set(schema, id); // before the body, so that $ref cycles resolve to this rule
    this.g.define(id, this.schemaFrag(schema, path));
    return id;
  }

  private resolveRef(ref: string, path: string): Schema {
    if (!ref.startsWith('#'))
      throw new ConstraintCompileError(
        `$ref ${JSON.stringify(ref)} at ${path}: only local references (#…) are supported`,
      );
    let cur: unknown = this.root;
    const pointer = ref.slice(1);
    if (pointer) {
      if (!pointer.startsWith('/'))
        throw new ConstraintCompileError(`$ref ${JSON.stringify(ref)} at ${path}: only JSON pointers are supported`);
      for (const raw of pointer.slice(1).split('/')) {
        let key: string;
        try {
          key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
        } catch {
          // Not percent-encoding (`%ZZ`): the client's schema is wrong, which is a 400, not the server's fault.
          throw new ConstraintCompileError(`$ref ${JSON.stringify(ref)} at ${path} is not a valid JSON pointer`);
        }
        if (Array.isArray(cur)) cur = cur[Number(key)];
        else if (isObject(cur)) cur = cur[key];
        else cur = undefined;
        if (cur === undefined)
          throw new ConstraintCompileError(`$ref ${JSON.stringify(ref)} at ${path} does not resolve`);
      }
    }
    if (!isObject(cur) && typeof cur !== 'boolean')
      throw new ConstraintCompileError(`$ref ${JSON.stringify(ref)} at ${path} is not a schema`);
    return cur;
  }

  private schemaFrag(schema: Schema, path: string): Frag {
    if (schema === true) return call(this.anyValue());
    if (schema === false) return never;
    if (!isObject(schema)) throw new ConstraintCompileError(`${path} is not a schema`);
    for (const k of UNSUPPORTED)
      if (k in schema && !(k === 'unevaluatedItems' && schema[k] === false))
        throw new ConstraintCompileError(`unsupported keyword ${JSON.stringify(k)} at ${path}`);
    if (schema.uniqueItems === true) throw new ConstraintCompileError(`unsupported keyword "uniqueItems" at ${path}`);

    if (typeof schema.$ref === 'string') {
      // Draft 2019+ allows siblings of $ref; they are merged in when present (common with descriptions only).
      const target = this.resolveRef(schema.$ref, path);
      const rest = withoutKeys(schema, ['$ref', ...ANNOTATIONS]);
      if (Object.keys(rest).length === 0) return call(this.schemaRule(target, schema.$ref));
      return this.schemaFrag(mergeSchemas(this.deref(target, path), rest, path), path);
    }
    if (Array.isArray(schema.allOf)) {
      let merged: SchemaObject = withoutKeys(schema, ['allOf']);
      schema.allOf.forEach((sub, i) => {
        merged = mergeSchemas(merged, this.deref(sub as Schema, `${path}/allOf/${i}`), path);
      });
      return this.schemaFrag(merged, path);
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      const list = schema[key];
      if (!Array.isArray(list)) continue;
      // oneOf is generated like anyOf (as xgrammar does): branches should be disjoint for exactness.
      const siblings = withoutKeys(schema, [key, ...ANNOTATIONS]);
      const hasSiblings = Object.keys(siblings).length > 0;
      return alt(
        ...list.map((sub, i) => {
          const p = `${path}/${key}/${i}`;
          if (!hasSiblings) return call(this.schemaRule(sub as Schema, p));
          return call(this.g.rule(p, this.schemaFrag(mergeSchemas(siblings, this.deref(sub as Schema, p), p), p)));
        }),
      );
    }
    if ('const' in schema) return this.literals([schema.const as Json], schema, path);
    if (Array.isArray(schema.enum)) return this.literals(schema.enum as Json[], schema, path);

    const types = this.typesOf(schema, path);
    if (types === null) return call(this.anyValue());
    const frags: Frag[] = [];
    for (const t of types) {
      switch (t) {
        case 'object':
          frags.push(this.objectFrag(schema, path));
          break;
        case 'array':
          frags.push(this.arrayFrag(schema, path));
          break;
        case 'string':
          frags.push(this.stringSchemaFrag(schema, path));
          break;
        case 'integer':
          frags.push(this.integerFrag(schema, path));
          break;
        case 'number':
          frags.push(this.numberFrag(schema, path));
          break;
        case 'boolean':
          frags.push(alt(lit('true'), lit('false')));
          break;
        case 'null':
          frags.push(lit('null'));
          break;
      }
    }
    return frags.length === 1 ? frags[0] : alt(...frags);
  }

  /** Follows $ref chains (for merging), guarding against cycles. */
  private deref(s: Schema, path: string): Schema {
    const seen = new Set<unknown>();
    while (
      isObject(s) &&
      typeof s.$ref === 'string' &&
      Object.keys(withoutKeys(s, ['$ref', ...ANNOTATIONS])).length === 0
    ) {
      if (seen.has(s)) throw new ConstraintCompileError(`$ref cycle at ${path}`);
      seen.add(s);
      s = this.resolveRef(s.$ref, path);
    }
    return s;
  }

  private typesOf(schema: SchemaObject, path: string): TypeName[] | null {
    let types: TypeName[] | null = null;
    const t = schema.type;
    if (typeof t === 'string') types = [t as TypeName];
    else if (Array.isArray(t)) types = t as TypeName[];
    else if (t !== undefined) throw new ConstraintCompileError(`invalid "type" at ${path}`);
    if (types) {
      for (const x of types)
        if (!TYPES.includes(x)) throw new ConstraintCompileError(`unknown type ${JSON.stringify(x)} at ${path}`);
    } else {
      // No type: inferred from the keywords present, else any value.
      const has = (...ks: string[]) => ks.some((k) => k in schema);
      if (has('properties', 'required', 'additionalProperties')) types = ['object'];
      else if (has('items', 'prefixItems', 'minItems', 'maxItems')) types = ['array'];
      else if (has('pattern', 'minLength', 'maxLength', 'format')) types = ['string'];
      else if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum')) types = ['number'];
    }
    if (types && schema.nullable === true && !types.includes('null')) types = [...types, 'null'];
    // integer ⊂ number: keep only number when both are listed.
    if (types && types.includes('number')) types = types.filter((x) => x !== 'integer');
    return types;
  }

  private literals(values: Json[], schema: SchemaObject, path: string): Frag {
    const types = this.typesOf(schema, path);
    const kept = values.filter((v) => types === null || types.some((t) => matchesType(v, t)));
    if (kept.length === 0) return never;
    // Canonical compact JSON: every listed value is produced in one spelling.
    return alt(...[...new Set(kept.map((v) => JSON.stringify(v)))].map((text) => lit(text)));
  }

  private objectFrag(schema: SchemaObject, path: string): Frag {
    const { ws, comma, colon } = this.style;
    const props = isObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    let additional: Schema | null;
    const ap = schema.additionalProperties;
    if (ap === undefined) {
      // xgrammar's strict mode (vLLM's default): only declared properties, unless nothing is declared at all.
      const declaresAny = Object.keys(props).length > 0 || required.size > 0;
      additional = declaresAny || this.opts.disableAdditionalProperties ? null : true;
    } else if (ap === false) additional = null;
    else if (ap === true || isObject(ap)) additional = ap;
    else throw new ConstraintCompileError(`invalid additionalProperties at ${path}`);

    const entries: Array<{ name: string; rule: number; required: boolean }> = [];
    for (const [name, sub] of Object.entries(props))
      entries.push({
        name,
        rule: this.schemaRule(sub as Schema, `${path}/properties/${name}`),
        required: required.has(name),
      });
    for (const name of required) {
      if (name in props) continue;
      // Required but undeclared: its value follows additionalProperties (any value when that is not a schema).
      const sub: Schema = additional !== null && additional !== true ? additional : true;
      entries.push({ name, rule: this.schemaRule(sub, `${path}/additionalProperties`), required: true });
    }
    const extra =
      additional === null
        ? null
        : seq(
            entries.length
              ? seq(lit('"'), automatonFrag(allStringsExcept(entries.map((e) => e.name)), 'json'), lit('"'))
              : call(this.anyString()),
            colon,
            call(this.schemaRule(additional, `${path}/additionalProperties`)),
          );

    return (b, from) => {
      const start = ws(b, lit('{')(b, from));
      // `none`: no member written yet (null once a required one must have been); `some`: at least one.
      let none: number | null = start;
      let some: number | null = null;
      for (const e of entries) {
        const member = seq(lit(JSON.stringify(e.name)), colon, call(e.rule));
        const after = b.node();
        if (none !== null) b.epsilon(member(b, none), after);
        if (some !== null) b.epsilon(seq(comma, member)(b, some), after);
        if (e.required) {
          none = null;
          some = after;
        } else if (some !== null) {
          const merged = b.node();
          b.epsilon(some, merged);
          b.epsilon(after, merged);
          some = merged;
        } else some = after;
      }
      const end = b.node();
      const tail = b.node(); // ≥ 1 member written, all declared ones done
      if (some !== null) b.epsilon(some, tail);
      if (extra) {
        if (none !== null) b.epsilon(extra(b, none), tail);
        b.epsilon(seq(comma, extra)(b, tail), tail);
      }
      if (none !== null) b.epsilon(lit('}')(b, none), end);
      b.epsilon(seq(ws, lit('}'))(b, tail), end);
      return end;
    };
  }

  private arrayFrag(schema: SchemaObject, path: string): Frag {
    const { ws, comma } = this.style;
    let prefix: Schema[] = [];
    let rest: Schema | null;
    if (Array.isArray(schema.prefixItems)) {
      prefix = schema.prefixItems as Schema[];
      rest = schema.items === undefined ? null : (schema.items as Schema);
    } else if (Array.isArray(schema.items)) {
      // Draft 4–7 tuple form.
      prefix = schema.items as Schema[];
      rest = schema.additionalItems === undefined ? null : (schema.additionalItems as Schema);
    } else rest = schema.items === undefined ? true : (schema.items as Schema);
    if (rest === false) rest = null;
    const min = typeof schema.minItems === 'number' ? Math.max(0, Math.ceil(schema.minItems)) : 0;
    let max = typeof schema.maxItems === 'number' ? Math.floor(schema.maxItems) : Infinity;
    if (rest === null) max = Math.min(max, prefix.length);
    if (min > max) return never;
    if (min > MAX_ITEMS) throw new ConstraintCompileError(`minItems above ${MAX_ITEMS} is not supported (at ${path})`);
    if (max !== Infinity) max = Math.min(max, Math.max(MAX_ITEMS, prefix.length)); // fewer items is still valid
    const prefixRules = prefix.map((s, i) => this.schemaRule(s, `${path}/prefixItems/${i}`));
    const restRule = rest === null ? -1 : this.schemaRule(rest, `${path}/items`);
    const item = (k: number): Frag => call(k < prefixRules.length ? prefixRules[k] : restRule);
    // Unroll the counted part (every count up to maxItems, or up to max(minItems, prefix) when unbounded);
    // beyond it, a loop of rest items.
    const bounded = max !== Infinity;
    const limit = bounded ? max : Math.max(min, prefixRules.length);
    return (b, from) => {
      const end = b.node();
      let cur = ws(b, lit('[')(b, from));
      for (let k = 0; ; k++) {
        if (k >= min) b.epsilon((k === 0 ? lit(']') : seq(ws, lit(']')))(b, cur), end);
        if (k === limit) break;
        const next = b.node();
        b.epsilon((k === 0 ? item(k) : seq(comma, item(k)))(b, cur), next);
        cur = next;
      }
      if (!bounded && restRule >= 0) {
        // `cur` holds `limit` items: more rest items, then close.
        const loop = b.node();
        b.epsilon(cur, loop);
        if (limit === 0) {
          const first = b.node();
          b.epsilon(item(0)(b, loop), first);
          const more = b.node();
          b.epsilon(first, more);
          b.epsilon(seq(comma, call(restRule))(b, more), more);
          b.epsilon(seq(ws, lit(']'))(b, more), end);
        } else {
          b.epsilon(seq(comma, call(restRule))(b, loop), loop);
          b.epsilon(seq(ws, lit(']'))(b, loop), end);
        }
      }
      return end;
    };
  }

  private stringSchemaFrag(schema: SchemaObject, path: string): Frag {
    const parts: CharAutomaton[] = [];
    if (typeof schema.pattern === 'string') {
      try {
        parts.push(regexToAutomaton(schema.pattern));
      } catch (e) {
        throw new ConstraintCompileError(`pattern at ${path}: ${(e as Error).message}`);
      }
    }
    if (typeof schema.format === 'string' && FORMATS[schema.format])
      parts.push(regexToAutomaton(FORMATS[schema.format]));
    const minLength = typeof schema.minLength === 'number' ? Math.max(0, Math.ceil(schema.minLength)) : 0;
    let maxLength = typeof schema.maxLength === 'number' ? Math.floor(schema.maxLength) : Infinity;
    if (minLength > maxLength) return never;
    const bounded = minLength > 0 || maxLength !== Infinity;
    if (parts.length === 0) {
      if (!bounded) return call(this.anyString());
      // Length only: a counted repetition of calls to one shared character rule (tiny, any length up to
      // the cap). A shorter maximum than requested is still sound: every output validates.
      if (minLength > MAX_STRING_REPEAT)
        throw new ConstraintCompileError(`minLength above ${MAX_STRING_REPEAT} is not supported (at ${path})`);
      if (maxLength !== Infinity) maxLength = Math.min(maxLength, MAX_STRING_REPEAT);
      return seq(lit('"'), repeat(call(this.anyChar()), minLength, maxLength), lit('"'));
    }
    if (bounded) {
      // With a pattern or format the length is a product automaton (pattern state × count): capped lower.
      if (minLength > MAX_PATTERN_LENGTH)
        throw new ConstraintCompileError(
          `minLength above ${MAX_PATTERN_LENGTH} with a pattern or format is not supported (at ${path})`,
        );
      parts.push(
        lengthAutomaton(minLength, maxLength === Infinity ? Infinity : Math.min(maxLength, MAX_PATTERN_LENGTH)),
      );
    }
    let a = parts[0];
    for (let i = 1; i < parts.length; i++) a = intersect(a, parts[i]);
    return this.stringFrag(a);
  }

  private integerFrag(schema: SchemaObject, path: string): Frag {
    if (schema.multipleOf !== undefined && schema.multipleOf !== 1)
      throw new ConstraintCompileError(`unsupported keyword "multipleOf" at ${path}`);
    const { lo, loStrict, hi, hiStrict } = bounds(schema, path);
    if (lo === null && hi === null) return regexFrag(JSON_INTEGER);
    const toBig = (x: number, up: boolean, strict: boolean): bigint => {
      // Smallest (largest) integer within the bound.
      if (Number.isInteger(x)) return BigInt(x) + (strict ? (up ? 1n : -1n) : 0n);
      return BigInt(up ? Math.ceil(x) : Math.floor(x));
    };
    const source = integerRange(
      lo === null ? null : toBig(lo, true, loStrict),
      hi === null ? null : toBig(hi, false, hiStrict),
    );
    return source === null ? never : regexFrag(source);
  }

  private numberFrag(schema: SchemaObject, path: string): Frag {
    if (schema.multipleOf !== undefined)
      throw new ConstraintCompileError(`unsupported keyword "multipleOf" at ${path}`);
    const { lo, loStrict, hi, hiStrict } = bounds(schema, path);
    if (lo === null && hi === null) return call(this.number());
    // Bounded numbers are written without exponent, so that digit-wise comparison is exact.
    let a: CharAutomaton | null = null;
    if (lo !== null) a = regexToAutomaton(decimalAtLeast(lo, loStrict));
    if (hi !== null) {
      const h = regexToAutomaton(decimalAtMost(hi, hiStrict));
      a = a ? intersect(a, h) : h;
    }
    return a && !a.isEmpty ? automatonFrag(a, 'raw') : never;
  }

  build(rootRule: number): Grammar {
    return this.g.build(rootRule);
  }
}

const ANNOTATIONS = [
  'title',
  'description',
  'default',
  'examples',
  '$schema',
  '$id',
  '$comment',
  '$anchor',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$defs',
  'definitions',
];

function withoutKeys(s: SchemaObject, keys: string[]): SchemaObject {
  const out: SchemaObject = {};
  for (const [k, v] of Object.entries(s)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/**
 * Shallow allOf merge: properties merged (per-name allOf), required united, types intersected, enums
 * intersected, numeric and length bounds tightened; other keywords: the later one wins.
 */
function mergeSchemas(a: Schema, b: Schema, path: string): SchemaObject {
  if (a === false || b === false) return { enum: [] };
  if (a === true) return b === true ? {} : { ...b };
  if (b === true) return { ...a };
  const out: SchemaObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (!(k in out)) {
      out[k] = v;
      continue;
    }
    const u = out[k];
    switch (k) {
      case 'properties': {
        const p: SchemaObject = { ...(u as SchemaObject) };
        for (const [name, s] of Object.entries(v as SchemaObject)) p[name] = name in p ? { allOf: [p[name], s] } : s;
        out[k] = p;
        break;
      }
      case 'required':
        out[k] = [...new Set([...(u as string[]), ...(v as string[])])];
        break;
      case 'type': {
        const x = Array.isArray(u) ? u : [u];
        const y = Array.isArray(v) ? v : [v];
        const both = x.filter((t) => y.includes(t) || (t === 'integer' && y.includes('number')));
        for (const t of y)
          if (t === 'integer' && x.includes('number') && !both.includes('integer')) both.push('integer');
        if (both.length === 0) return { enum: [] };
        out[k] = both;
        break;
      }
      case 'enum':
        out[k] = (u as Json[]).filter((x) => (v as Json[]).some((y) => JSON.stringify(x) === JSON.stringify(y)));
        break;
      case 'minimum':
      case 'exclusiveMinimum':
      case 'minLength':
      case 'minItems':
        out[k] = typeof u === 'number' && typeof v === 'number' ? Math.max(u, v) : v;
        break;
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxLength':
      case 'maxItems':
        out[k] = typeof u === 'number' && typeof v === 'number' ? Math.min(u, v) : v;
        break;
      case 'items':
      case 'additionalProperties':
        out[k] = isObject(u) || isObject(v) ? { allOf: [u, v] } : u === false || v === false ? false : v;
        break;
      case 'anyOf':
      case 'oneOf':
      case 'pattern':
        throw new ConstraintCompileError(`allOf combining two ${JSON.stringify(k)} is not supported (at ${path})`);
      default:
        out[k] = v;
    }
  }
  return out;
}

function matchesType(v: Json, t: TypeName): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
  }
}

function bounds(
  schema: SchemaObject,
  path: string,
): { lo: number | null; loStrict: boolean; hi: number | null; hiStrict: boolean } {
  const num = (k: string): number | null => {
    const v = schema[k];
    if (v === undefined || typeof v === 'boolean') return null;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new ConstraintCompileError(`invalid ${k} at ${path}`);
    return v;
  };
  let lo = num('minimum');
  let loStrict = false;
  let hi = num('maximum');
  let hiStrict = false;
  // Draft 4 spelled exclusivity as booleans next to minimum/maximum.
  if (schema.exclusiveMinimum === true) loStrict = lo !== null;
  if (schema.exclusiveMaximum === true) hiStrict = hi !== null;
  const exMin = num('exclusiveMinimum');
  const exMax = num('exclusiveMaximum');
  if (exMin !== null && (lo === null || exMin >= lo)) {
    lo = exMin;
    loStrict = true;
  }
  if (exMax !== null && (hi === null || exMax <= hi)) {
    hi = exMax;
    hiStrict = true;
  }
  return { lo, loStrict, hi, hiStrict };
}

/**
 * Compiles a JSON Schema. additionalProperties, by default, follows xgrammar's strict mode (vLLM's
 * default backend): an object that declares properties or required names allows no others; one that
 * declares nothing (`{"type": "object"}`) allows any members unless disable_additional_properties. An
 * explicit `additionalProperties` always wins.
 */
export function compileJsonSchema(schema: unknown, opts: JsonGrammarOptions = {}): Grammar {
  const c = new JsonCompiler(schema, opts);
  return c.build(c.compileRoot());
}

/** Any JSON object (vLLM's json_object). */
export function compileJsonObject(opts: JsonGrammarOptions = {}): Grammar {
  const c = new JsonCompiler({}, opts);
  return c.build(c.anyObjectRoot());
}
