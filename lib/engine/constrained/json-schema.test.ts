import Ajv2020 from 'ajv/dist/2020';
import AjvDraft7 from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { Tokenizer, trainBpeMerges, defaultTokenizerConfig } from '../tokenizer';
import {
  compileStructuredOutput,
  StructuredOutputCompileError,
  type GrammarTokenConstraint,
  type StructuredOutputSpecInput,
} from './index';
import { decodeStrict, firstRejectedByte, randomWalk } from '@/tests/support/constrained';

const byteTok = new Tokenizer();
// A tokenizer whose merges look like JSON (`{"`, `":`, `"}`, …): multi-byte tokens that straddle grammar
// boundaries, so masks must walk tokens byte by byte.
const bpeTok = new Tokenizer(
  trainBpeMerges(
    [
      '{"name": "Ann", "age": 31, "tags": ["a", "b"]}',
      '{"value": 1, "children": [{"value": 2, "children": []}]}',
      '[1, 2, 3], {"a": true}, {"b": null}, "x\\"y", 1.5e10, -0.25',
    ].flatMap((t) => [t, t, t]),
    40,
    defaultTokenizerConfig(),
  ),
);
const tokenizers = [
  ['byte vocab', byteTok],
  ['bpe vocab', bpeTok],
] as const;

const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
addFormats(ajv);
const ajv7 = new AjvDraft7({ strict: false, allowUnionTypes: true });
addFormats(ajv7);

function constraintFor(spec: StructuredOutputSpecInput, tok: Tokenizer): GrammarTokenConstraint {
  const end = tok.specialTokenId('<|im_end|>') as number;
  return compileStructuredOutput(spec, tok, [end, tok.eosId]) as GrammarTokenConstraint;
}

const json = (schema: unknown, extra: Partial<StructuredOutputSpecInput> = {}): StructuredOutputSpecInput => ({
  constraint: { kind: 'json', schema },
  ...extra,
});

/** Random walks under the schema: every finished walk must parse and validate. */
function checkWalks(
  schema: unknown,
  opts: { seeds?: number; draft7?: boolean; extra?: Partial<StructuredOutputSpecInput> } = {},
) {
  const validate = (opts.draft7 ? ajv7 : ajv).compile(schema as object);
  const outputs: string[] = [];
  for (const [, tok] of tokenizers) {
    const c = constraintFor(json(schema, opts.extra), tok);
    const ends = [tok.specialTokenId('<|im_end|>') as number, tok.eosId];
    for (let seed = 0; seed < (opts.seeds ?? 60); seed++) {
      const w = randomWalk(c, (id) => tok.tokenBytes(id), ends, seed, { maxSteps: 6000 });
      if (!w.complete) continue;
      const text = decodeStrict(w.bytes);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new Error(`not JSON: ${text}`);
      }
      if (!validate(value)) throw new Error(`invalid: ${text}\n${JSON.stringify(validate.errors)}`);
      outputs.push(text);
    }
  }
  // Nearly every walk finishes (end tokens are picked with some bias once allowed).
  expect(outputs.length).toBeGreaterThan((opts.seeds ?? 60) * 1.5);
  return outputs;
}

const SCHEMAS: Record<string, unknown> = {
  'nested arrays of objects with required fields': {
    type: 'object',
    properties: {
      people: {
        type: 'array',
        minItems: 1,
        maxItems: 4,
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 8 },
            age: { type: 'integer', minimum: 0, maximum: 150 },
            emails: { type: 'array', items: { type: 'string', format: 'email' }, maxItems: 2 },
            grid: { type: 'array', items: { type: 'array', items: { type: 'integer' }, maxItems: 3 }, maxItems: 3 },
          },
          required: ['name', 'age'],
        },
      },
    },
    required: ['people'],
  },
  'recursive $ref tree': {
    $defs: {
      node: {
        type: 'object',
        properties: {
          value: { type: 'integer' },
          children: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 3 },
        },
        required: ['value', 'children'],
      },
    },
    $ref: '#/$defs/node',
  },
  'recursive root through definitions and anyOf': {
    definitions: { leaf: { type: 'string', maxLength: 3 } },
    anyOf: [{ $ref: '#/definitions/leaf' }, { type: 'array', items: { $ref: '#' }, maxItems: 3 }],
  },
  'enums with quotes, backslashes, control characters and unicode': {
    enum: ['a"b', 'c\\d', 'ünï', '😀', 'line\nbreak', '', 1, 2.5, null, true, { k: [1, 'é'] }, ['x']],
  },
  'pattern with alternation and counted repetition': {
    type: 'string',
    pattern: '^(ab|cd){2,3}-[0-9]{1,2}(x|yz)?$',
  },
  'pattern with unicode classes and escapes needed in JSON': {
    type: 'string',
    pattern: '^[\\p{L}"\\\\]{1,4}\\t?[^a-z]$',
  },
  'pattern made of control characters (escaped as \\n or \\u00XX)': {
    type: 'string',
    pattern: '^[\\x00-\\x1f\\x7f]{2,3}$',
  },
  'strings with maxLength 0, 1 and small ranges': {
    type: 'object',
    properties: {
      e: { type: 'string', maxLength: 0 },
      o: { type: 'string', maxLength: 1 },
      m: { type: 'string', minLength: 2, maxLength: 3 },
    },
    required: ['e', 'o', 'm'],
  },
  'numbers with exponents and bounded numbers': {
    type: 'object',
    properties: {
      any: { type: 'number' },
      bounded: { type: 'number', minimum: -2.5, exclusiveMaximum: 3.75 },
      positive: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
      negative: { type: 'number', exclusiveMaximum: -0.125 },
      small: { type: 'integer', minimum: -12, maximum: 7 },
      big: { type: 'integer', exclusiveMinimum: 99 },
    },
    required: ['any', 'bounded', 'positive', 'negative', 'small', 'big'],
  },
  'empty objects': {
    type: 'object',
    properties: {
      none: { type: 'object', additionalProperties: false },
      open: { type: 'object', properties: {}, maxItems: 2 },
    },
    required: ['none'],
    additionalProperties: false,
  },
  'additionalProperties false and a schema': {
    type: 'object',
    properties: {
      strict: { type: 'object', properties: { a: { type: 'boolean' } }, additionalProperties: false },
      typed: {
        type: 'object',
        properties: { a: { type: 'integer' } },
        additionalProperties: { type: 'string', maxLength: 2 },
      },
    },
    required: ['strict', 'typed'],
    additionalProperties: false,
  },
  'anyOf of object / array / null': {
    anyOf: [
      { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'] },
      { type: 'array', items: { type: 'integer' }, maxItems: 5 },
      { type: 'null' },
    ],
  },
  'oneOf with disjoint branches, allOf merge, const, type unions': {
    type: 'object',
    properties: {
      kind: { oneOf: [{ const: 'circle' }, { const: 'square' }] },
      u: { type: ['string', 'integer', 'null'], maxLength: 2 },
      merged: {
        allOf: [
          { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
          { properties: { y: { type: 'string', maxLength: 1 } }, required: ['y'] },
        ],
      },
      c: { const: { deep: ['const', 1, null] } },
      nullable: { type: 'string', nullable: true, maxLength: 1 },
    },
    required: ['kind', 'u', 'merged', 'c', 'nullable'],
  },
  'prefixItems tuple with rest items and minItems': {
    type: 'array',
    prefixItems: [{ type: 'boolean' }, { type: 'string', maxLength: 2 }],
    items: { type: 'integer' },
    minItems: 3,
    maxItems: 6,
  },
  'formats: date, time, date-time, uuid, ipv4, email, hostname': {
    type: 'object',
    properties: {
      d: { type: 'string', format: 'date' },
      t: { type: 'string', format: 'time' },
      dt: { type: 'string', format: 'date-time' },
      u: { type: 'string', format: 'uuid' },
      ip: { type: 'string', format: 'ipv4' },
      e: { type: 'string', format: 'email' },
      h: { type: 'string', format: 'hostname' },
    },
    required: ['d', 't', 'dt', 'u', 'ip', 'e', 'h'],
  },
  'keys needing escapes, optional properties in order': {
    type: 'object',
    properties: {
      'we"ird\\key': { type: 'integer' },
      ключ: { type: 'boolean' },
      opt1: { type: 'null' },
      opt2: { type: 'array', maxItems: 2 },
    },
    required: ['ключ'],
  },
};

describe('JSON Schema: random walks always parse and validate', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(name, () => {
      checkWalks(schema);
    });
  }

  it('draft-7 tuple items with additionalItems', () => {
    checkWalks(
      { type: 'array', items: [{ type: 'integer' }, { enum: ['x', 'y'] }], additionalItems: false },
      { draft7: true },
    );
  });

  it('disable_any_whitespace: xgrammar separators, no other whitespace', () => {
    const outs = checkWalks(SCHEMAS['nested arrays of objects with required fields'], {
      extra: { disable_any_whitespace: true },
    });
    for (const o of outs) {
      const skeleton = o.replace(/"(?:[^"\\]|\\.)*"/g, '""');
      expect(skeleton).not.toMatch(/[\n\t]/);
      expect(skeleton.replace(/[,:] /g, '')).not.toMatch(/ /);
    }
  });

  it('whitespace_pattern replaces the whitespace rule', () => {
    const outs = checkWalks(
      { type: 'array', items: { type: 'integer' }, maxItems: 4 },
      { extra: { whitespace_pattern: '\n?' } },
    );
    for (const o of outs) expect(o).not.toMatch(/[ \t]/);
  });

  it('free whitespace is one byte per place by default, so answers close within a small budget', () => {
    const c = constraintFor(json({ type: 'array' }), byteTok);
    expect(firstRejectedByte(c, '[ ]')).toBe(-1);
    expect(firstRejectedByte(c, '[\n1,\n2 ]')).toBe(-1);
    expect(firstRejectedByte(c, '[  ]')).toBe(2);
    expect(firstRejectedByte(c, '[1,\n  2]')).toBe(4);
    // The longest answer {"a": <0..9>} can take is now 11 bytes; with xgrammar's unbounded runs it has none.
    const small = constraintFor(
      json({ type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['a'] }),
      byteTok,
    );
    expect(firstRejectedByte(small, ' { "a" : 7 } ')).toBe(0);
    expect(firstRejectedByte(small, '{ "a" : 7 }')).toBe(-1);
    expect(firstRejectedByte(small, '{ "a" :  7 }')).toBe(8);
  });
});

describe('JSON Schema: known-valid strings accepted byte by byte, invalid ones rejected at the right byte', () => {
  const cases: Array<{ schema: unknown; valid: string[]; invalid: Array<[string, number]> }> = [
    {
      schema: SCHEMAS['nested arrays of objects with required fields'],
      valid: [
        '{"people": [{"name": "A", "age": 0}]}',
        '{ "people" : [ { "name" : "Zoé", "age" : 150 , "emails" : [ "a.b@c.io" ] } , {"name":"x","age":7,"grid":[[],[1,2,3]]} ] }',
      ],
      invalid: [
        ['{"people": []}', 12], // minItems 1: `]` not allowed
        ['{"people": [{"age": 1}]}', 14], // name must come first (declared order) and is required
        ['{"people": [{"name": "A", "age": 151}]}', 35],
        ['{"people": [{"name": "123456789", "age": 1}]}', 30], // maxLength 8: the 9th character
        ['{"people": [{"name": "A", "age": 1}], "x": 1}', 36], // no additional properties
        ['{"people": [{"name": "A", "age": 1}]} ', 37], // nothing after the value
      ],
    },
    {
      schema: { type: 'string', maxLength: 2 },
      valid: ['""', '"ab"', '"\\n\\u00e9"', '"\\"\\\\"', '"😀é"', '"\\ud7ff"', '"\\/"'],
      invalid: [
        ['"abc"', 3],
        ['"\n"', 1], // raw control character, even though the length allows it
        ['"\\x"', 2], // invalid escape
        ['"\\ud800"', 4], // lone surrogate escape
        ['"\\u12"', 5],
      ],
    },
    {
      schema: { type: 'number' },
      valid: ['0', '-0', '1.5e10', '-2E-3', '12.000', '1e+9'],
      invalid: [
        ['01', 1],
        ['1.', 2],
        ['.5', 0],
        ['1e', 2],
        ['+1', 0],
        ['--1', 1],
      ],
    },
    {
      schema: { type: 'integer', minimum: -20, maximum: 305 },
      valid: ['-20', '0', '305', '99', '-9', '300'],
      invalid: [
        ['-21', 2],
        ['306', 2],
        ['1000', 3],
        ['1.0', 1],
        ['-0', 1], // canonical integers: no negative zero
      ],
    },
    {
      schema: { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: { type: 'string' } },
      valid: ['{}', '{"a": 1}', '{"b": "x"}', '{"a": 1, "ab": "y", "": ""}'],
      invalid: [
        ['{"a": "x"}', 6], // a is declared: integer
        ['{"b": 1}', 6],
      ],
    },
    {
      schema: { enum: ['a"b', 'ünï', 1] },
      valid: ['"a\\"b"', '"ünï"', '1'],
      invalid: [
        ['"a"', 2],
        ['"ü"', 3],
        ['2', 0],
      ],
    },
  ];
  for (const [i, { schema, valid, invalid }] of cases.entries()) {
    it(`case ${i}`, () => {
      for (const [, tok] of tokenizers) {
        const c = constraintFor(json(schema), tok);
        for (const v of valid) expect([v, firstRejectedByte(c, v)]).toEqual([v, -1]);
        for (const [v, at] of invalid) expect([v, firstRejectedByte(c, v)]).toEqual([v, at]);
      }
    });
  }

  it('json_object: any object, not other values', () => {
    const c = constraintFor({ constraint: { kind: 'json_object' } }, byteTok);
    for (const v of ['{}', '{"a": [1, {"b": null}], "c": "\\u0041"}', '{ "x" : -1.5e3 }'])
      expect(firstRejectedByte(c, v)).toBe(-1);
    expect(firstRejectedByte(c, '[1]')).toBe(0);
    expect(firstRejectedByte(c, '{"a": tru }')).toBe(9);
    expect(firstRejectedByte(c, '{"a" 1}')).toBe(5);
  });
});

describe('JSON Schema: compile errors', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ type: 'strin' }, /unknown type "strin"/],
    [{ not: { type: 'null' } }, /unsupported keyword "not" at #/],
    [{ type: 'array', uniqueItems: true }, /unsupported keyword "uniqueItems"/],
    [{ $ref: '#' }, /no output can satisfy the constraint/],
    [{ anyOf: [{ $ref: '#' }, { type: 'null' }] }, /recursion without consuming input/],
    [{ $ref: 'http://example.com/s.json' }, /only local references/],
    [{ $ref: '#/$defs/missing' }, /does not resolve/],
    [{ $ref: '#/%ZZ' }, /"#\/%ZZ" at # is not a valid JSON pointer/],
    [{ type: 'string', minLength: 3, maxLength: 2 }, /no output can satisfy the constraint/],
    [{ type: 'string', pattern: '(a+)\\1' }, /pattern at #: backreferences are not supported/],
    [{ type: 'number', multipleOf: 0.5 }, /unsupported keyword "multipleOf"/],
    ['{not json', /the schema is not valid JSON/],
  ];
  for (const [schema, re] of bad) {
    it(JSON.stringify(schema), () => {
      let err: unknown;
      try {
        constraintFor(json(schema), byteTok);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StructuredOutputCompileError);
      expect((err as Error).message).toMatch(/^structured_outputs\.json could not be compiled: /);
      expect((err as Error).message).toMatch(re);
    });
  }

  it('whitespace_pattern that could produce non-whitespace', () => {
    expect(() => constraintFor(json({ type: 'array' }, { whitespace_pattern: '[ x]*' }), byteTok)).toThrow(
      /whitespace_pattern may only match JSON whitespace/,
    );
  });
});

describe('JSON Schema: defaults and caps', () => {
  it('{"type": "object"} alone allows any members; disable_additional_properties makes it {}', () => {
    const open = constraintFor(json({ type: 'object' }), byteTok);
    expect(firstRejectedByte(open, '{"x": [1, {"y": null}]}')).toBe(-1);
    const closed = constraintFor(json({ type: 'object' }, { disable_additional_properties: true }), byteTok);
    expect(firstRejectedByte(closed, '{}')).toBe(-1);
    expect(firstRejectedByte(closed, '{"x": 1}')).toBe(1);
    // Explicit additionalProperties: true still wins.
    const explicit = constraintFor(
      json(
        { type: 'object', properties: { a: { type: 'null' } }, additionalProperties: true },
        { disable_additional_properties: true },
      ),
      byteTok,
    );
    expect(firstRejectedByte(explicit, '{"a": null, "b": 2}')).toBe(-1);
  });

  it('very large maxLength / maxItems are lowered (outputs still validate); huge minimums are refused', () => {
    const c = constraintFor(json({ type: 'string', maxLength: 1e9 }), byteTok);
    expect(firstRejectedByte(c, `"${'a'.repeat(10_000)}"`)).toBe(-1);
    expect(firstRejectedByte(c, `"${'a'.repeat(10_001)}"`)).toBe(10_001);
    const arr = constraintFor(json({ type: 'array', items: { type: 'integer' }, maxItems: 1e9 }), byteTok);
    expect(firstRejectedByte(arr, `[${Array(50).fill(1).join(',')}]`)).toBe(-1);
    expect(() => constraintFor(json({ type: 'string', minLength: 20_000 }), byteTok)).toThrow(/minLength above 10000/);
    expect(() => constraintFor(json({ type: 'array', minItems: 5000 }), byteTok)).toThrow(/minItems above 2000/);
  });
});

describe('JSON Schema: random schemas (fuzz)', () => {
  /** A random schema from the supported subset. */
  function randomSchema(rng: () => number, depth: number): Record<string, unknown> {
    const pick = <T>(xs: T[]): T => xs[Math.floor(rng() * xs.length)];
    const kinds =
      depth > 2
        ? ['string', 'integer', 'number', 'boolean', 'null', 'enum']
        : ['object', 'array', 'anyOf', 'string', 'integer', 'number', 'enum', 'object'];
    switch (pick(kinds)) {
      case 'object': {
        const properties: Record<string, unknown> = {};
        const n = Math.floor(rng() * 4);
        for (let i = 0; i < n; i++) properties[pick(['a', 'b"', 'ç', 'key', 'x y', ''])] = randomSchema(rng, depth + 1);
        const names = Object.keys(properties);
        const s: Record<string, unknown> = { type: 'object', properties, required: names.filter(() => rng() < 0.5) };
        const ap = rng();
        if (ap < 0.3) s.additionalProperties = false;
        else if (ap < 0.45) s.additionalProperties = randomSchema(rng, depth + 2);
        return s;
      }
      case 'array': {
        const s: Record<string, unknown> = { type: 'array', items: randomSchema(rng, depth + 1) };
        if (rng() < 0.5) s.minItems = Math.floor(rng() * 3);
        if (rng() < 0.7) s.maxItems = Math.floor(rng() * 4) + ((s.minItems as number) ?? 0);
        if (rng() < 0.3) s.prefixItems = [randomSchema(rng, depth + 1)];
        return s;
      }
      case 'anyOf':
        return { anyOf: [randomSchema(rng, depth + 1), randomSchema(rng, depth + 1)] };
      case 'string': {
        const s: Record<string, unknown> = { type: 'string' };
        if (rng() < 0.4) s.maxLength = Math.floor(rng() * 4);
        if (rng() < 0.3) s.minLength = Math.floor(rng() * 2);
        if (rng() < 0.2) s.pattern = pick(['^[a-c]+$', '\\d{2}|x', '(é|"|\\\\)*']);
        if (rng() < 0.1) s.format = pick(['date', 'uuid']);
        return s;
      }
      case 'integer': {
        const s: Record<string, unknown> = { type: 'integer' };
        if (rng() < 0.5) s.minimum = Math.floor(rng() * 200) - 100;
        if (rng() < 0.5) s.exclusiveMaximum = Math.floor(rng() * 200) - 50;
        return s;
      }
      case 'number': {
        const s: Record<string, unknown> = { type: 'number' };
        if (rng() < 0.4) s.minimum = Math.round((rng() * 20 - 10) * 100) / 100;
        if (rng() < 0.4) s.maximum = Math.round((rng() * 20 - 5) * 1000) / 1000;
        return s;
      }
      case 'boolean':
        return { type: 'boolean' };
      case 'null':
        return { type: 'null' };
      default:
        return { enum: [pick(['a', '"q"', 'ü']), pick([1, null, true, [1], { z: 'é' }])] };
    }
  }

  it('100 random schemas: compile (or are provably empty), every walk validates', () => {
    let state = 12345;
    const rng = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 2 ** 32;
    };
    let checked = 0;
    for (let i = 0; i < 100; i++) {
      const schema = randomSchema(rng, 0);
      let c: GrammarTokenConstraint;
      try {
        c = constraintFor(json(schema), i % 2 ? bpeTok : byteTok);
      } catch (e) {
        // Contradictory bounds can leave nothing to generate; anything else is a bug.
        expect((e as Error).message).toMatch(/no output can satisfy the constraint/);
        continue;
      }
      const tok = i % 2 ? bpeTok : byteTok;
      const validate = ajv.compile(schema);
      for (let seed = 0; seed < 10; seed++) {
        const w = randomWalk(
          c,
          (id) => tok.tokenBytes(id),
          [tok.specialTokenId('<|im_end|>') as number, tok.eosId],
          seed,
          {
            maxSteps: 6000,
          },
        );
        if (!w.complete) continue;
        const text = decodeStrict(w.bytes);
        const value: unknown = JSON.parse(text);
        if (!validate(value))
          throw new Error(`schema ${JSON.stringify(schema)}\noutput ${text}\n${JSON.stringify(validate.errors)}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(600);
  });
});
