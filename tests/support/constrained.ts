import { Generator } from '@/lib/engine/random';
import {
  maskHas,
  type ConstraintState,
  type GrammarTokenConstraint,
  type TokenConstraint,
} from '@/lib/engine/constrained/token-constraint';

/**
 * Helpers for the constraint tests (not used by engine code): random walks over allowed tokens and
 * byte-by-byte acceptance checks.
 */

export interface WalkResult {
  tokens: number[];
  bytes: Uint8Array;
  complete: boolean;
  steps: number;
}

/**
 * Samples uniformly among the allowed tokens until an end token is drawn (then the output must be
 * complete). `endBias` is the chance of picking an end token whenever one is allowed, so that walks over
 * open-ended grammars finish; the rest of the time the draw is uniform over all allowed tokens.
 */
export function randomWalk(
  c: TokenConstraint,
  tokenBytes: (id: number) => Uint8Array,
  endIds: readonly number[],
  seed: number,
  options: { maxSteps?: number; endBias?: number } = {},
): WalkResult {
  const rng = new Generator(seed);
  const maxSteps = options.maxSteps ?? 4000;
  const endBias = options.endBias ?? 0.3;
  let s: ConstraintState = c.initialState;
  const tokens: number[] = [];
  const bytes: number[] = [];
  for (let step = 0; step < maxSteps; step++) {
    const mask = c.allowedTokens(s);
    const allowed: number[] = [];
    for (let id = 0; id < c.vocabSize; id++) if (maskHas(mask, id)) allowed.push(id);
    if (allowed.length === 0)
      throw new Error(`dead end after ${JSON.stringify(new TextDecoder().decode(Uint8Array.from(bytes)))}`);
    const ends = allowed.filter((id) => endIds.includes(id));
    if (ends.length !== (c.isComplete(s) ? endIds.length : 0))
      throw new Error(`end tokens allowed=${ends.length} but complete=${c.isComplete(s)}`);
    let id: number;
    if (ends.length && (rng.random() < endBias || ends.length === allowed.length)) id = ends[0];
    else {
      const content = allowed.filter((x) => !endIds.includes(x));
      id = content[Math.floor(rng.random() * content.length)];
    }
    if (endIds.includes(id)) return { tokens, bytes: Uint8Array.from(bytes), complete: true, steps: step };
    const next = c.advance(s, id);
    if (!next) throw new Error(`allowed token ${id} was rejected by advance`);
    s = next;
    tokens.push(id);
    for (const b of tokenBytes(id)) bytes.push(b);
  }
  return { tokens, bytes: Uint8Array.from(bytes), complete: false, steps: maxSteps };
}

const enc = new TextEncoder();

/**
 * Feeds the UTF-8 of `text` byte by byte. Returns the index of the first rejected byte, `-1` when every
 * byte is accepted and the result is complete, or the byte length when accepted but incomplete.
 */
export function firstRejectedByte(c: GrammarTokenConstraint, text: string | Uint8Array): number {
  const bytes = typeof text === 'string' ? enc.encode(text) : text;
  let s: ConstraintState | null = c.initialState;
  for (let i = 0; i < bytes.length; i++) {
    s = c.advanceBytes(s, [bytes[i]]);
    if (!s) return i;
  }
  return c.isComplete(s) ? -1 : bytes.length;
}

export function decodeStrict(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}
