/**
 * Colours for the token view: a token's probability exp(logprob) on a red → amber → green hue scale.
 * Probability rather than logprob is what people read at a glance ("the model was 40% sure"); the
 * scale is linear in it so that the midpoint, amber, really means a coin flip. Backgrounds are
 * translucent so the same colour works on light and dark surfaces with the normal text colour on top.
 */

export function logprobToProbability(logprob: number): number {
  if (Number.isNaN(logprob)) return 0;
  // -Infinity (a token the sampler could not have picked, e.g. forced by a grammar) is probability 0.
  return Math.min(1, Math.max(0, Math.exp(logprob)));
}

/** Hue in degrees: 0 (red) for probability 0, 120 (green) for 1. */
export function probabilityHue(probability: number): number {
  const p = Math.min(1, Math.max(0, Number.isNaN(probability) ? 0 : probability));
  return Math.round(p * 120);
}

export function logprobBackground(logprob: number): string {
  return `hsl(${probabilityHue(logprobToProbability(logprob))} 85% 50% / 0.28)`;
}

/** A word for the probability, so that the colour is never the only way to tell (WCAG 1.4.1). */
export function confidenceLabel(probability: number): 'high' | 'medium' | 'low' {
  if (probability >= 0.7) return 'high';
  if (probability >= 0.3) return 'medium';
  return 'low';
}

/** "83%", "0.4%", "<0.1%": enough digits to tell small probabilities apart. */
export function formatProbability(probability: number): string {
  const pct = probability * 100;
  if (pct >= 10) return `${Math.round(pct)}%`;
  if (pct >= 0.1) return `${pct.toFixed(1)}%`;
  return pct === 0 ? '0%' : '<0.1%';
}

/** Bytes that only spell U+FFFD itself (EF BF BD…) say nothing more than the character does. */
function isReplacementEncoding(bytes: readonly number[]): boolean {
  if (bytes.length % 3 !== 0) return false;
  for (let i = 0; i < bytes.length; i += 3)
    if (bytes[i] !== 0xef || bytes[i + 1] !== 0xbf || bytes[i + 2] !== 0xbd) return false;
  return true;
}

/**
 * Tokens as a person should see them: a byte-level tokenizer yields spaces, newlines and tabs that would
 * otherwise be invisible in a token chip.
 */
export function visibleToken(token: string, bytes: readonly number[] | null = null): string {
  if (token === '') return '∅';
  // A byte-level token holding part of a multi-byte character decodes to U+FFFD: its bytes say more.
  if (token.includes('\uFFFD') && bytes && bytes.length > 0 && !isReplacementEncoding(bytes)) {
    return bytes.map((b) => `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return token.replace(/ /g, '·').replace(/\n/g, '↵').replace(/\t/g, '⇥');
}
