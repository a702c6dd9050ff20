import { describe, expect, it } from 'vitest';
import { Tokenizer } from '../tokenizer';
import { compileStructuredOutput, maskHas, type TokenVocabulary } from './index';

const enc = new TextEncoder();

describe('token constraint semantics', () => {
  const tok = new Tokenizer();
  const IM_END = tok.specialTokenId('<|im_end|>') as number;
  const BOS = tok.bosId;

  it('end tokens exactly when complete; other special tokens never; ended state only allows end tokens', () => {
    const c = compileStructuredOutput({ constraint: { kind: 'regex', pattern: 'ab?' } }, tok, [IM_END, tok.eosId]);
    let s = c.initialState;
    expect([c.isComplete(s), c.canContinue(s)]).toEqual([false, true]);
    expect(maskHas(c.allowedTokens(s), IM_END)).toBe(false);
    expect(c.advance(s, IM_END)).toBeNull();
    expect(c.advance(s, 98)).toBeNull(); // 'b' first
    s = c.advance(s, 97) ?? s;
    // "a" is complete and may continue with "b".
    expect([c.isComplete(s), c.canContinue(s)]).toEqual([true, true]);
    const m = c.allowedTokens(s);
    expect([maskHas(m, IM_END), maskHas(m, tok.eosId), maskHas(m, BOS), maskHas(m, 98), maskHas(m, 97)]).toEqual([
      true,
      true,
      false,
      true,
      false,
    ]);
    expect(c.advance(s, BOS)).toBeNull();
    const s2 = c.advance(s, 98);
    expect(s2 && [c.isComplete(s2), c.canContinue(s2)]).toEqual([true, false]);
    const ended = c.advance(s2 ?? s, IM_END);
    expect(ended).not.toBeNull();
    if (!ended) return;
    expect([c.isComplete(ended), c.canContinue(ended)]).toEqual([true, false]);
    expect(c.advance(ended, 97)).toBeNull();
    expect(c.advance(ended, tok.eosId)).toBe(ended);
    // Masks are cached per state.
    expect(c.allowedTokens(s)).toBe(m);
  });

  it('states are shared: equal positions are the same object (n > 1 choices share work)', () => {
    const c = compileStructuredOutput({ constraint: { kind: 'json_object' } }, tok, [IM_END]);
    const walk = (text: string) =>
      [...enc.encode(text)].reduce(
        (s, b) => (s ? c.advance(s, b) : null),
        c.initialState as ReturnType<typeof c.advance>,
      );
    expect(walk('{"a": 1')).toBe(walk('{"b": 1'));
  });

  it('works with any vocabulary layout: duplicate byte tokens, multi-byte tokens, empty tokens', () => {
    // id 0..255 bytes, 256 = end, 257 = second 'a', 258 = "ab", 259 = empty (never allowed), 260 = "\u00e9" (2 bytes)
    const pieces: Uint8Array[] = [];
    for (let b = 0; b < 256; b++) pieces.push(Uint8Array.of(b));
    pieces.push(enc.encode('<end>'), Uint8Array.of(97), enc.encode('ab'), new Uint8Array(0), enc.encode('é'));
    const vocab: TokenVocabulary = {
      vocabSize: pieces.length,
      tokenBytes: (id) => pieces[id],
      isSpecial: (id) => id === 256,
    };
    const c = compileStructuredOutput({ constraint: { kind: 'choice', choices: ['ab', 'é'] } }, vocab, [256]);
    const m = c.allowedTokens(c.initialState);
    const allowed = Array.from({ length: vocab.vocabSize }, (_, i) => i).filter((i) => maskHas(m, i));
    expect(allowed).toEqual([97, 0xc3, 257, 258, 260]);
    const s = c.advance(c.initialState, 258);
    expect(s && c.isComplete(s)).toBe(true);
    expect(c.advance(c.initialState, 259)).toBeNull();
  });
});
