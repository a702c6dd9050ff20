import { describe, expect, it } from 'vitest';
import { defaultTokenizerConfig, Tokenizer, trainBpeMerges } from '../tokenizer';
import { compileStructuredOutput, StructuredOutputCompileError, type GrammarTokenConstraint } from './index';
import { decodeStrict, firstRejectedByte, randomWalk } from '@/tests/support/constrained';
import { utf8Sequences } from './utf8';

const byteTok = new Tokenizer();
const bpeTok = new Tokenizer(
  trainBpeMerges(['catdog cat dog 123-cat 45-dog abab cdcd yes no maybe'.repeat(3)], 30, defaultTokenizerConfig()),
);
const tokenizers = [byteTok, bpeTok];

function regex(pattern: string, tok: Tokenizer = byteTok): GrammarTokenConstraint {
  return compileStructuredOutput({ constraint: { kind: 'regex', pattern } }, tok, [
    tok.eosId,
  ]) as GrammarTokenConstraint;
}

describe('utf8Sequences', () => {
  it('covers exactly the UTF-8 encodings of a range', () => {
    const enc = new TextEncoder();
    for (const [lo, hi] of [
      [0, 0x10ffff],
      [0x7f, 0x800],
      [0xd000, 0xe100],
      [0x10000, 0x10ffff],
      [0xe9, 0xe9],
    ]) {
      const seqs = utf8Sequences(lo, hi);
      const matches = (bytes: Uint8Array) =>
        seqs.filter((s) => s.length === bytes.length && s.every(([a, b], i) => bytes[i] >= a && bytes[i] <= b)).length;
      for (let cp = Math.max(0, lo - 300); cp <= Math.min(0x10ffff, hi + 300); cp += cp > 0x20000 ? 997 : 1) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const want = cp >= lo && cp <= hi ? 1 : 0;
        // Plain comparison in the loop (an expect per code point is slow); report the first mismatch.
        if (matches(enc.encode(String.fromCodePoint(cp))) !== want)
          expect([lo, hi, cp]).toBe('matched once iff inside');
      }
    }
  });
});

describe('regex: random walks always match fully', () => {
  const patterns = [
    '\\d{3}-(cat|dog)',
    '^(ab|cd){2,3}-[0-9]{1,2}(x|yz)?$',
    '[\\p{L}\\p{N}_]{1,10}',
    '(a|b)*abb',
    '.{0,5}',
    '[^a-z]{1,3}x?',
    '(?:[01]\\d|2[0-3]):[0-5]\\d',
    'é+|😀{2}',
    '\\w+@\\w+\\.(com|org)',
    '(?P<year>\\d{4})-(?<m>0[1-9]|1[0-2])',
    'a|',
    '',
    '(^yes|^no)$',
    '\\-\\_[\\s\\S]?',
  ];
  for (const p of patterns) {
    it(JSON.stringify(p), () => {
      const re = new RegExp(
        `^(?:${p
          .replace(/\(\?P</g, '(?<')
          .replace(/\\-/g, '-')
          .replace(/\\_/g, '_')})$`,
        'u',
      );
      let done = 0;
      for (const tok of tokenizers) {
        const c = regex(p, tok);
        for (let seed = 0; seed < 80; seed++) {
          const w = randomWalk(c, (id) => tok.tokenBytes(id), [tok.eosId], seed, { endBias: 0.2 });
          if (!w.complete) continue;
          const text = decodeStrict(w.bytes);
          if (!re.test(text)) throw new Error(`${JSON.stringify(text)} does not match ${p}`);
          done++;
        }
      }
      expect(done).toBeGreaterThan(150);
    });
  }
});

describe('regex: byte-level acceptance', () => {
  it('accepts valid strings and rejects at the first bad byte', () => {
    const c = regex('\\d{3}-(cat|dog)');
    expect(firstRejectedByte(c, '123-cat')).toBe(-1);
    expect(firstRejectedByte(c, '12a')).toBe(2);
    expect(firstRejectedByte(c, '123-cow')).toBe(5);
    expect(firstRejectedByte(c, '123-ca')).toBe(6); // accepted so far, incomplete
    expect(firstRejectedByte(c, '123-cats')).toBe(7);
  });

  it('works on UTF-8 bytes: multi-byte characters and classes', () => {
    const c = regex('é+[α-ω]');
    expect(firstRejectedByte(c, 'ééβ')).toBe(-1);
    expect(firstRejectedByte(c, 'e')).toBe(0);
    expect(firstRejectedByte(c, Uint8Array.of(0xc3, 0xa8))).toBe(1); // è shares é's lead byte
    const dot = regex('.');
    expect(firstRejectedByte(dot, '\n')).toBe(0); // JS dot: no line terminators
    expect(firstRejectedByte(dot, '😀')).toBe(-1);
    expect(firstRejectedByte(dot, Uint8Array.of(0xed, 0xa0, 0x80))).toBe(1); // an encoded surrogate is not UTF-8
  });

  it('anchors inside the pattern keep their meaning', () => {
    const c = regex('a(^b|c)$');
    expect(firstRejectedByte(c, 'ac')).toBe(-1);
    expect(firstRejectedByte(c, 'ab')).toBe(1);
  });

  it('choice: exactly one of the strings', () => {
    for (const tok of tokenizers) {
      const choices = ['yes', 'no', 'yes!', 'ünï "q"', ''];
      const c = compileStructuredOutput({ constraint: { kind: 'choice', choices } }, tok, [
        tok.eosId,
      ]) as GrammarTokenConstraint;
      for (const ch of choices) expect(firstRejectedByte(c, ch)).toBe(-1);
      expect(firstRejectedByte(c, 'ye')).toBe(2);
      expect(firstRejectedByte(c, 'yes!!')).toBe(4);
      expect(firstRejectedByte(c, 'n0')).toBe(1);
      const seen = new Set<string>();
      for (let seed = 0; seed < 100; seed++) {
        const w = randomWalk(c, (id) => tok.tokenBytes(id), [tok.eosId], seed, { endBias: 0.5 });
        expect(w.complete).toBe(true);
        seen.add(decodeStrict(w.bytes));
      }
      expect([...seen].sort()).toEqual([...choices].sort());
    }
  });
});

describe('regex: compile errors are 400-ready', () => {
  const bad: Array<[string, RegExp]> = [
    ['(a+)\\1', /backreferences are not supported/],
    ['a(?=b)', /unsupported assertion \(\?=b\)/],
    ['\\bword\\b', /unsupported assertion \\b/],
    ['a^b', /no output can satisfy the constraint/], // refa proves it empty
    ['[', /Invalid regular expression|Unterminated character class/],
    ['(a|b', /Unterminated group|Invalid regular expression/],
    ['[^\\s\\S]', /no output can satisfy the constraint/],
    ['(a|b)*a(a|b){40}', /too complex/],
  ];
  for (const [p, re] of bad) {
    it(p, () => {
      let err: unknown;
      try {
        regex(p);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StructuredOutputCompileError);
      expect((err as Error).message).toMatch(/^structured_outputs\.regex could not be compiled: /);
      expect((err as Error).message).toMatch(re);
    });
  }
});
