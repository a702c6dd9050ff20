import { describe, expect, it } from 'vitest';
import {
  confidenceLabel,
  splitInvalidBytes,
  formatProbability,
  logprobBackground,
  logprobToProbability,
  probabilityHue,
  visibleToken,
} from './logprob-color';

describe('logprob colour scale', () => {
  it('maps logprobs to probabilities, clamping the edge cases', () => {
    expect(logprobToProbability(0)).toBe(1);
    expect(logprobToProbability(Math.log(0.25))).toBeCloseTo(0.25);
    expect(logprobToProbability(-Infinity)).toBe(0);
    expect(logprobToProbability(Number.NaN)).toBe(0);
    expect(logprobToProbability(0.5)).toBe(1);
  });

  it('runs from red through amber to green, monotonically', () => {
    expect(probabilityHue(0)).toBe(0);
    expect(probabilityHue(0.5)).toBe(60);
    expect(probabilityHue(1)).toBe(120);
    let last = -1;
    for (let lp = -20; lp <= 0; lp += 0.5) {
      const hue = probabilityHue(logprobToProbability(lp));
      expect(hue).toBeGreaterThanOrEqual(last);
      last = hue;
    }
    expect(logprobBackground(0)).toBe('hsl(120 85% 50% / 0.28)');
    expect(logprobBackground(-Infinity)).toBe('hsl(0 85% 50% / 0.28)');
  });

  it('labels and formats probabilities for people', () => {
    expect(confidenceLabel(0.9)).toBe('high');
    expect(confidenceLabel(0.3)).toBe('medium');
    expect(confidenceLabel(0.01)).toBe('low');
    expect(formatProbability(0.834)).toBe('83%');
    expect(formatProbability(0.0412)).toBe('4.1%');
    expect(formatProbability(0.00001)).toBe('<0.1%');
    expect(formatProbability(0)).toBe('0%');
  });

  it('makes whitespace tokens visible', () => {
    expect(visibleToken(' a\n\t')).toBe('·a↵⇥');
    expect(visibleToken('')).toBe('∅');
    expect(visibleToken('\uFFFD', [0xe2])).toBe('\\xE2');
    expect(visibleToken('\uFFFD', null)).toBe('\uFFFD');
    // A server that reports the bytes of the decoded text gives nothing more to show.
    expect(visibleToken('\uFFFD', [0xef, 0xbf, 0xbd])).toBe('\uFFFD');
  });
});

describe('splitInvalidBytes', () => {
  it('shows invalid UTF-8 and control characters as byte chips, from the bytes the tokens reported', () => {
    expect(splitInvalidBytes('plain', [])).toEqual([{ kind: 'text', text: 'plain' }]);
    const tokens = [
      { token: 'a', bytes: [0x61] },
      { token: '\uFFFD', bytes: [0xe2] },
      { token: '\uFFFD', bytes: [0x80] },
      { token: 'é', bytes: [0xc3, 0xa9] },
      { token: '\u0001', bytes: [0x01] },
      { token: '\n', bytes: [0x0a] },
    ];
    const content = new TextDecoder().decode(Uint8Array.from(tokens.flatMap((t) => t.bytes)));
    expect(splitInvalidBytes(content, tokens)).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'bytes', label: '\\xE2\\x80' },
      { kind: 'text', text: 'é' },
      { kind: 'bytes', label: '\\x01' },
      { kind: 'text', text: '\n' },
    ]);
  });

  it('falls back to a generic chip when the tokens do not carry the bytes', () => {
    expect(splitInvalidBytes('a\uFFFD\uFFFDb\u0002', [{ token: 'token_id:5', bytes: null }])).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'bytes', label: '\\x??' },
      { kind: 'text', text: 'b' },
      { kind: 'bytes', label: '\\x02' },
    ]);
  });
});
