import { describe, expect, it } from 'vitest';
import { Tokenizer } from '@/lib/engine/tokenizer';
import {
  clampLogprob,
  formatLogprobEntry,
  formatPromptLogprobs,
  utf8Bytes,
  vllmDecodedTokens,
  type TokenCandidate,
} from './logprobs';
import { wireJson } from './python-json';

const c = (tokenId: number, tokenText: string, logprob: number): TokenCandidate => ({ tokenId, tokenText, logprob });

describe('utf8Bytes (Python encode("utf-8", errors="replace"))', () => {
  it('encodes 1- to 4-byte characters', () => {
    expect(utf8Bytes('Hello')).toEqual([72, 101, 108, 108, 111]);
    expect(utf8Bytes(' there')).toEqual([32, 116, 104, 101, 114, 101]);
    expect(utf8Bytes('é')).toEqual([0xc3, 0xa9]);
    expect(utf8Bytes('日')).toEqual([0xe6, 0x97, 0xa5]);
    expect(utf8Bytes('😀')).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    expect(utf8Bytes('\ufffd')).toEqual([0xef, 0xbf, 0xbd]);
  });
  it('replaces a lone surrogate with ?', () => {
    expect(utf8Bytes('a\ud800b')).toEqual([97, 0x3f, 98]);
  });
});

describe('formatLogprobEntry (docs/contract.md §8.8, §8.9)', () => {
  const ranked = [c(1, 'A', -0.5), c(2, 'B', -1), c(3, 'C', -2), c(4, 'D', -3)];

  it('renders token_id:N with the decoded text bytes on the main entry and label bytes on top entries', () => {
    expect(
      formatLogprobEntry(c(9707, 'Hello', -0.31), [c(9707, 'Hello', -0.31), c(5, 'Hi', -2)], {
        topLogprobs: 2,
        asTokenIds: true,
      }),
    ).toEqual({
      token: 'token_id:9707',
      logprob: -0.31,
      bytes: [72, 101, 108, 108, 111],
      top_logprobs: [
        { token: 'token_id:9707', logprob: -0.31, bytes: utf8Bytes('token_id:9707') },
        { token: 'token_id:5', logprob: -2, bytes: utf8Bytes('token_id:5') },
      ],
    });
  });

  it('renders decoded text without token-id rendering', () => {
    const entry = formatLogprobEntry(c(1, 'A', -0.5), ranked, { topLogprobs: 1, asTokenIds: false });
    expect(entry).toEqual({
      token: 'A',
      logprob: -0.5,
      bytes: [65],
      top_logprobs: [{ token: 'A', logprob: -0.5, bytes: [65] }],
    });
  });

  it('top_logprobs 0 gives []', () => {
    expect(formatLogprobEntry(c(1, 'A', -0.5), ranked, { topLogprobs: 0, asTokenIds: true }).top_logprobs).toEqual([]);
  });

  it('a rank-1 sample gives exactly top-1..N', () => {
    const top = formatLogprobEntry(c(1, 'A', -0.5), ranked, { topLogprobs: 3, asTokenIds: false }).top_logprobs;
    expect(top.map((t) => t.token)).toEqual(['A', 'B', 'C']);
  });

  it('any other sample comes first, then the ranked tokens (vLLM quirk)', () => {
    const outside = formatLogprobEntry(c(9, 'Z', -7), ranked, { topLogprobs: 3, asTokenIds: false }).top_logprobs;
    expect(outside.map((t) => t.token)).toEqual(['Z', 'A', 'B']);
    // A sample of rank 3 is listed once: [sampled, top-1, top-2, top-4…].
    const inside = formatLogprobEntry(c(3, 'C', -2), ranked, { topLogprobs: 3, asTokenIds: false }).top_logprobs;
    expect(inside.map((t) => t.token)).toEqual(['C', 'A', 'B']);
  });

  it('floors logprobs at −9999.0', () => {
    const entry = formatLogprobEntry(c(1, 'A', -Infinity), [c(2, 'B', -1e6)], { topLogprobs: 2, asTokenIds: false });
    expect(entry.logprob).toBe(-9999);
    expect(entry.top_logprobs.map((t) => t.logprob)).toEqual([-9999, -9999]);
    expect(clampLogprob(-0.1)).toBe(-0.1);
  });

  it('bytes of an incomplete UTF-8 token are those of U+FFFD', () => {
    expect(formatLogprobEntry(c(1, '\ufffd', -1), [], { topLogprobs: 0, asTokenIds: true }).bytes).toEqual([
      0xef, 0xbf, 0xbd,
    ]);
  });
});

describe('formatPromptLogprobs (docs/contract.md §8.8)', () => {
  it('first entry null, others keyed by id string with the actual token first and up to n candidates', () => {
    const positions = [
      { token: { ...c(10, '<s>', 0), rank: null }, ranked: [] },
      {
        token: { ...c(11, 'Hi', -2), rank: 3 },
        ranked: [
          { ...c(12, 'Yo', -0.1), rank: 1 },
          { ...c(13, 'Hey', -0.5), rank: 2 },
          { ...c(11, 'Hi', -2), rank: 3 },
        ],
      },
      { token: { ...c(14, '!', -Infinity), rank: 9 }, ranked: [{ ...c(14, '!', -Infinity), rank: 9 }] },
    ];
    expect(formatPromptLogprobs(positions, 2)).toEqual([
      null,
      {
        '11': { logprob: -2, rank: 3, decoded_token: 'Hi' },
        '12': { logprob: -0.1, rank: 1, decoded_token: 'Yo' },
        '13': { logprob: -0.5, rank: 2, decoded_token: 'Hey' },
      },
      { '14': { logprob: -9999, rank: 9, decoded_token: '!' } },
    ]);
    // n = 0: only the actual token.
    expect(formatPromptLogprobs(positions, 0)[1]).toEqual({ '11': { logprob: -2, rank: 3, decoded_token: 'Hi' } });
  });

  it('writes the actual token first, then the candidates by rank, whatever their ids', () => {
    const positions = [
      null,
      {
        token: { ...c(90, 'Z', -3), rank: 4 },
        ranked: [
          { ...c(12, 'Yo', -0.1), rank: 1 },
          { ...c(91, 'W', -0.5), rank: 2 },
          { ...c(5, 'A', -0.7), rank: 3 },
        ],
      },
    ];
    const wire = wireJson(formatPromptLogprobs(positions, 3));
    // JSON.parse would reorder integer-like keys again: read the order off the bytes.
    expect(keysOnWire(wire)).toEqual(['90', '12', '91', '5']);
    expect(wire).toContain('{"90":{"logprob":-3.0,"rank":4,"decoded_token":"Z"},"12":');
  });

  it('an actual token among the candidates keeps first place with the candidate entry (vLLM dict)', () => {
    const positions = [
      null,
      {
        token: { ...c(7, 'b', -1), rank: 2 },
        ranked: [
          { ...c(3, 'a', -1), rank: 1 },
          { ...c(7, 'b', -1), rank: 2 },
        ],
      },
    ];
    expect(keysOnWire(wireJson(formatPromptLogprobs(positions, 2)))).toEqual(['7', '3']);
  });
});

function keysOnWire(json: string): string[] {
  return [...json.matchAll(/"(\d+)":\{"logprob"/g)].map((m) => m[1]);
}

describe('vllmDecodedTokens (vLLM ≥ 0.14 decoded_token of split characters)', () => {
  const tok = new Tokenizer();
  const decode = (ids: number[]) => tok.decode(ids);

  it('a leading byte reads "", the byte completing a two-byte character reads the character', () => {
    // "é" = C3 A9, sampled one byte per step; previous sampled token 'a'.
    expect(vllmDecodedTokens([0xc3], 97, decode)).toEqual(['']);
    expect(vllmDecodedTokens([0xa9], 0xc3, decode)).toEqual(['é']);
    // Three-byte characters: only two tokens are ever joined, so every piece reads "".
    expect(vllmDecodedTokens([0xb8], 0xe4, decode)).toEqual(['']);
    expect(vllmDecodedTokens([0xad], 0xb8, decode)).toEqual(['']);
    // The first generated token has no previous position.
    expect(vllmDecodedTokens([0xa9], null, decode)).toEqual(['']);
  });

  it('candidates are paired with the entry before them in the list (quirk copied); whole tokens are unchanged', () => {
    // List [sampled A9, candidate C3, candidate A9]: the second A9 is decoded after C3 → "é".
    expect(vllmDecodedTokens([0xa9, 0xc3, 0xa9, 104], 0x61, decode)).toEqual(['', '', 'é', 'h']);
  });
});
