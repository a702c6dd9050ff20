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

/** `\\xE2`: one byte as people read it in a chip. */
const hex = (b: number) => `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;

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
    return bytes.map(hex).join('');
  }
  return token.replace(/ /g, '·').replace(/\n/g, '↵').replace(/\t/g, '⇥');
}

export type TextPiece = { kind: 'text'; text: string } | { kind: 'bytes'; label: string };

// Control characters other than newline, tab and carriage return draw as tofu (or nothing at all).
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Length of the UTF-8 sequence starting at `i` when it is valid, else 0. */
function validSequenceLength(bytes: readonly number[], i: number): number {
  const b = bytes[i];
  const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
  if (n === 0 || i + n > bytes.length) return 0;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes.slice(i, i + n)));
    return n;
  } catch {
    return 0;
  }
}

function piecesFromBytes(bytes: readonly number[]): TextPiece[] {
  const pieces: TextPiece[] = [];
  const push = (piece: TextPiece) => {
    const last = pieces.at(-1);
    if (last && last.kind === piece.kind) {
      if (last.kind === 'text') last.text += (piece as { text: string }).text;
      else last.label += (piece as { label: string }).label;
    } else pieces.push(piece);
  };
  for (let i = 0; i < bytes.length;) {
    const n = validSequenceLength(bytes, i);
    if (n === 0) {
      push({ kind: 'bytes', label: hex(bytes[i]) });
      i += 1;
      continue;
    }
    const text = new TextDecoder().decode(Uint8Array.from(bytes.slice(i, i + n)));
    if (text === '\uFFFD') push({ kind: 'bytes', label: '\\x??' });
    else push(CONTROL.test(text) ? { kind: 'bytes', label: hex(bytes[i]) } : { kind: 'text', text });
    i += n;
  }
  return pieces;
}

/**
 * A reply's text with the bytes that do not display as text, invalid UTF-8 (U+FFFD once decoded) and control
 * characters, as pieces of their own labelled with their bytes (`\xE2\x80`), so the playground shows them as
 * visible chips instead of tofu. The bytes come from the tokens' logprobs; without them (or when they do not spell
 * the text), runs of U+FFFD become `\x??` chips.
 */
export function splitInvalidBytes(
  content: string,
  tokens: readonly { token: string; bytes: readonly number[] | null }[],
): TextPiece[] {
  if (!content.includes('\uFFFD') && !CONTROL.test(content)) return [{ kind: 'text', text: content }];
  if (tokens.length > 0 && tokens.every((t) => t.bytes)) {
    const bytes = tokens.flatMap((t) => t.bytes ?? []);
    if (new TextDecoder().decode(Uint8Array.from(bytes)) === content) return piecesFromBytes(bytes);
  }
  // The servers (vLLM, and Tuneboard after it) report a partial character's bytes as those of U+FFFD: the
  // original bytes are gone, so such runs can only say that bytes were invalid.
  const pieces: TextPiece[] = [];
  for (const part of content.split(new RegExp(`(\uFFFD+|${CONTROL.source})`))) {
    if (part === '') continue;
    if (part.startsWith('\uFFFD')) pieces.push({ kind: 'bytes', label: '\\x??' });
    else if (CONTROL.test(part)) pieces.push({ kind: 'bytes', label: hex(part.charCodeAt(0)) });
    else pieces.push({ kind: 'text', text: part });
  }
  return pieces;
}
