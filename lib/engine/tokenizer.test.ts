import { describe, expect, it } from 'vitest';
import { IncrementalDetokenizer, Tokenizer, defaultTokenizerConfig, trainBpeMerges } from './tokenizer';

describe('byte tokenizer', () => {
  const tok = new Tokenizer();

  it('has 256 bytes then the special tokens', () => {
    expect(tok.vocabSize).toBe(261);
    expect([
      tok.bosId,
      tok.eosId,
      tok.specialTokenId('<|im_start|>'),
      tok.specialTokenId('<|im_end|>'),
      tok.padId,
    ]).toEqual([256, 257, 258, 259, 260]);
  });

  it('encodes UTF-8 bytes and round-trips any text', () => {
    expect(tok.encode('hé')).toEqual([104, 0xc3, 0xa9]);
    const text = 'Grüße 🌍 — ok\n\t';
    expect(tok.decode(tok.encode(text))).toBe(text);
  });

  it('parses special-token text unless told not to, and adds BOS on request', () => {
    expect(tok.encode('<|im_start|>hi<|im_end|>')).toEqual([258, 104, 105, 259]);
    expect(tok.encode('<|im_end|>', { parseSpecialTokens: false })).toHaveLength(10);
    expect(tok.encode('a', { addBos: true })).toEqual([256, 97]);
  });

  it('decodes special tokens as text unless skipped', () => {
    expect(tok.decode([258, 104, 259])).toBe('<|im_start|>h<|im_end|>');
    expect(tok.decode([258, 104, 259], { skipSpecialTokens: true })).toBe('h');
  });

  it('gives token bytes and text for logprobs, partial bytes as U+FFFD', () => {
    expect(Array.from(tok.tokenBytes(0xc3))).toEqual([0xc3]);
    expect(tok.tokenText(0xc3)).toBe('\ufffd');
    expect(tok.tokenText(97)).toBe('a');
    expect(new TextDecoder().decode(tok.tokenBytes(259))).toBe('<|im_end|>');
    expect(() => tok.tokenBytes(261)).toThrow(RangeError);
  });
});

describe('incremental detokenizer', () => {
  const tok = new Tokenizer();

  it('never emits a broken character across token boundaries', () => {
    const d = new IncrementalDetokenizer(tok);
    const ids = tok.encode('a🌍é');
    const pieces = ids.map((id) => d.push(id));
    expect(pieces).toEqual(['a', '', '', '', '🌍', '', 'é']);
    expect(d.flush()).toBe('');
  });

  it('holds text that ends in U+FFFD until a complete character follows, as DecodeStream does', () => {
    const d = new IncrementalDetokenizer(tok);
    // A stray byte is invalid for good, but DecodeStream only sees text ending in U+FFFD and waits.
    expect(d.push(0xff)).toBe('');
    expect(d.push(0xe2)).toBe('');
    expect(d.push(0x82)).toBe('');
    expect(d.push(97)).toBe('\ufffd\ufffda');
    expect(d.push(0xf0)).toBe('');
    expect(d.flush()).toBe('\ufffd');
  });

  it('never releases trailing invalid bytes: a generated text does not end in U+FFFD', () => {
    const d = new IncrementalDetokenizer(tok, { skipSpecialTokens: true });
    expect([154, 154].map((id) => d.push(id))).toEqual(['', '']);
  });

  it('a skipped special token is invisible to the decoder; a shown one joins the byte stream', () => {
    const skip = new IncrementalDetokenizer(tok, { skipSpecialTokens: true });
    expect([0xc3, tok.eosId, 0xa9].map((id) => skip.push(id))).toEqual(['', '', 'é']);
    const show = new IncrementalDetokenizer(tok);
    expect(show.push(0xc3)).toBe('');
    expect(show.push(tok.eosId)).toBe('\ufffd<|eos|>');
    expect(show.push(104)).toBe('h');
  });
});

describe('BPE merges', () => {
  it('learns frequent pairs and encodes with them, still round-tripping', () => {
    const cfg = trainBpeMerges(['the cat the hat the mat', 'the theme'], 4);
    // "th" and "he" both occur 5 times; the tie goes to the lower pair, "he".
    expect(cfg.merges.slice(0, 2)).toEqual([
      [104, 101],
      [116, 261],
    ]);
    const tok = new Tokenizer(cfg);
    expect(tok.vocabSize).toBe(261 + cfg.merges.length);
    const ids = tok.encode('the cat');
    expect(ids.length).toBeLessThan(7);
    expect(tok.decode(ids)).toBe('the cat');
    expect(new TextDecoder().decode(tok.tokenBytes(262))).toBe('the');
  });

  it('rejects merges that reference later ids or special tokens', () => {
    expect(() => new Tokenizer({ ...defaultTokenizerConfig(), merges: [[97, 300]] })).toThrow(/invalid merge/);
    expect(() => new Tokenizer({ ...defaultTokenizerConfig(), merges: [[97, 257]] })).toThrow(/invalid merge/);
  });
});
