import { GrammarRuntime, type Grammar, type ParserState } from './grammar';

/**
 * From bytes to tokens. A token is allowed when all of its bytes are accepted in sequence (multi-byte BPE
 * merges are walked byte by byte through a trie shared by all tokens with the same prefix); special tokens
 * are never content: the end tokens (the request's EOS and stop ids) are allowed exactly when the output
 * so far is a complete match, every other special token never.
 */

/** What the constraint needs of a tokenizer (the engine's `Tokenizer` fits as it is). */
export interface TokenVocabulary {
  readonly vocabSize: number;
  tokenBytes(id: number): Uint8Array;
  isSpecial(id: number): boolean;
}

/** Opaque per-sequence position. Immutable: advancing returns a new one, so sequences can share a prefix. */
export type ConstraintState = ParserState;

/**
 * A token-level constraint. One instance per request (it owns the caches); any number of sequences (n > 1
 * choices) walk it, each with its own state.
 */
export interface TokenConstraint {
  readonly vocabSize: number;
  readonly initialState: ConstraintState;
  /**
   * Bitset over the vocabulary (bit `id & 31` of word `id >>> 5`) of the tokens allowed next. Cached per
   * state: callers must not modify it.
   */
  allowedTokens(state: ConstraintState): Uint32Array;
  /** The state after `tokenId`, or null when the token is not allowed (the state is then unchanged). */
  advance(state: ConstraintState, tokenId: number): ConstraintState | null;
  /** The output so far is a complete match: end tokens are allowed. */
  isComplete(state: ConstraintState): boolean;
  /** Some non-end token is allowed (false + complete = the model must stop now). */
  canContinue(state: ConstraintState): boolean;
}

export function maskHas(mask: Uint32Array, id: number): boolean {
  return (mask[id >>> 5] & (1 << (id & 31))) !== 0;
}

interface TrieNode {
  /** Tokens whose bytes end here. */
  tokens: number[];
  children: Map<number, TrieNode>;
}

/**
 * Token trie and byte tables for one vocabulary; independent of any grammar, so it can be built once per
 * tokenizer and shared by every request ({@link vocabularyIndex} caches it).
 */
export class VocabularyIndex {
  readonly size: number;
  readonly words: number;
  /** Tokens of exactly one byte, per byte value. */
  readonly singleByte: number[][] = Array.from({ length: 256 }, () => []);
  /** True when byte b is token b and no other token is that single byte (the engine's layout). */
  readonly identityBytes: boolean;
  /** Trie of the multi-byte tokens, from the root. */
  readonly multi: TrieNode = { tokens: [], children: new Map() };
  readonly bytes: Uint8Array[] = [];
  readonly special: Uint8Array;

  constructor(vocab: TokenVocabulary) {
    this.size = vocab.vocabSize;
    this.words = (this.size + 31) >>> 5;
    this.special = new Uint8Array(this.size);
    for (let id = 0; id < this.size; id++) {
      const bytes = vocab.tokenBytes(id);
      this.bytes.push(bytes);
      if (vocab.isSpecial(id) || bytes.length === 0) {
        this.special[id] = 1;
        continue;
      }
      if (bytes.length === 1) {
        this.singleByte[bytes[0]].push(id);
        continue;
      }
      let node = this.multi;
      for (const b of bytes) {
        let child = node.children.get(b);
        if (!child) node.children.set(b, (child = { tokens: [], children: new Map() }));
        node = child;
      }
      node.tokens.push(id);
    }
    this.identityBytes = this.size >= 256 && this.singleByte.every((ids, b) => ids.length === 1 && ids[0] === b);
  }
}

const indexCache = new WeakMap<TokenVocabulary, VocabularyIndex>();

export function vocabularyIndex(vocab: TokenVocabulary): VocabularyIndex {
  let index = indexCache.get(vocab);
  if (!index) indexCache.set(vocab, (index = new VocabularyIndex(vocab)));
  return index;
}

export class GrammarTokenConstraint implements TokenConstraint {
  readonly vocabSize: number;
  readonly initialState: ConstraintState;
  private readonly runtime: GrammarRuntime;
  private readonly endMask: Uint32Array;
  private readonly endIds: ReadonlySet<number>;

  constructor(
    grammar: Grammar,
    private readonly index: VocabularyIndex,
    /** Tokens that end the output (EOS, stop ids): allowed exactly when the output is complete. */
    endTokenIds: readonly number[],
  ) {
    this.runtime = new GrammarRuntime(grammar);
    this.vocabSize = index.size;
    this.initialState = this.runtime.initial;
    this.endMask = new Uint32Array(index.words);
    const ends = new Set<number>();
    for (const id of endTokenIds) {
      if (!(id >= 0 && id < index.size)) continue;
      ends.add(id);
      this.endMask[id >>> 5] |= 1 << (id & 31);
    }
    if (ends.size === 0) throw new Error('a token constraint needs at least one end token id');
    this.endIds = ends;
  }

  /** Interned parser states so far (for tests and figures). */
  get stateCount(): number {
    return this.runtime.stateCount;
  }

  allowedTokens(state: ConstraintState): Uint32Array {
    return state.tokenMask ?? this.computeMask(state);
  }

  advance(state: ConstraintState, tokenId: number): ConstraintState | null {
    if (this.endIds.has(tokenId)) return state.accept ? this.runtime.ended : null;
    if (state.ended || !(tokenId >= 0 && tokenId < this.index.size) || this.index.special[tokenId]) return null;
    return this.runtime.walk(state, this.index.bytes[tokenId]);
  }

  isComplete(state: ConstraintState): boolean {
    return state.accept;
  }

  canContinue(state: ConstraintState): boolean {
    if (!state.tokenMask) this.computeMask(state);
    return state.hasContent;
  }

  /** Feeds raw text (no special tokens); null when rejected. For tests and prefix checks. */
  advanceBytes(state: ConstraintState, bytes: ArrayLike<number>): ConstraintState | null {
    return state.ended ? null : this.runtime.walk(state, bytes);
  }

  private computeMask(state: ConstraintState): Uint32Array {
    const idx = this.index;
    const mask = new Uint32Array(idx.words);
    let content = false;
    if (!state.ended) {
      const bm = state.byteMask;
      if (idx.identityBytes) {
        // The engine's layout: ids 0–255 are the bytes, so the byte mask is the first 8 words.
        for (let w = 0; w < 8; w++) {
          mask[w] = bm[w];
          if (bm[w]) content = true;
        }
      } else {
        for (let b = 0; b < 256; b++) {
          if (!(bm[b >>> 5] & (1 << (b & 31)))) continue;
          for (const id of idx.singleByte[b]) {
            mask[id >>> 5] |= 1 << (id & 31);
            content = true;
          }
        }
      }
      if (idx.multi.children.size && this.walkTrie(state, idx.multi, mask)) content = true;
    }
    if (state.accept) for (let w = 0; w < mask.length; w++) mask[w] |= this.endMask[w];
    state.tokenMask = mask;
    state.hasContent = content;
    return mask;
  }

  /** Depth-first over the multi-byte trie: only prefixes the grammar accepts are followed. */
  private walkTrie(state: ConstraintState, node: TrieNode, mask: Uint32Array): boolean {
    let any = false;
    for (const [b, child] of node.children) {
      if (!(state.byteMask[b >>> 5] & (1 << (b & 31)))) continue;
      const next = this.runtime.step(state, b);
      if (!next) continue;
      for (const id of child.tokens) {
        mask[id >>> 5] |= 1 << (id & 31);
        any = true;
      }
      if (child.children.size && this.walkTrie(next, child, mask)) any = true;
    }
    return any;
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/**
 * Applies a mask to logits: disallowed tokens become −∞, in `out` when given, else in a new array (the input is
 * left alone).
 * Use it on the raw logits before the sampling pipeline, as vLLM applies the grammar bitmask before the
 * sampler: logprobs are then those of the constrained distribution, as vLLM reports them.
 */
export function applyTokenMask(logits: ArrayLike<number>, mask: Uint32Array, out?: Float32Array): Float32Array {
  const V = logits.length;
  const x = out ?? new Float32Array(V);
  const words = Math.ceil(V / 32);
  // The bits of the last word that name tokens (it may be partial); `| 0`: a short mask allows nothing more.
  const tail = V % 32 === 0 ? -1 : (1 << (V % 32)) - 1;
  let allowed = 0;
  for (let w = 0; w < words - 1; w++) allowed += popcount(mask[w] | 0);
  allowed += popcount(mask[words - 1] & tail);
  // One fill or copy of the whole row with what most tokens get, then a write for each token that gets the other,
  // found a set bit at a time: with Qwen3's 151,669 tokens a test of every bit took 0.5–1.3 ms a step, mostly
  // mispredicted branches (inside a JSON string every token is allowed but those holding a quote or a control
  // character, scattered through the vocabulary).
  if (allowed * 2 >= V) {
    if (logits instanceof Float32Array) x.set(logits);
    else for (let i = 0; i < V; i++) x[i] = logits[i];
    for (let w = 0; w < words; w++) {
      let z = ~(mask[w] | 0) & (w === words - 1 ? tail : -1);
      if (z === 0) continue;
      const base = w * 32;
      if (z === -1) x.fill(-Infinity, base, base + 32);
      else for (; z !== 0; z &= z - 1) x[base + 31 - Math.clz32(z & -z)] = -Infinity;
    }
  } else {
    x.fill(-Infinity, 0, V);
    for (let w = 0; w < words; w++) {
      let b = (mask[w] | 0) & (w === words - 1 ? tail : -1);
      if (b === 0) continue;
      const base = w * 32;
      if (b === -1) for (let j = base; j < base + 32; j++) x[j] = logits[j];
      else
        for (; b !== 0; b &= b - 1) {
          const j = base + 31 - Math.clz32(b & -b);
          x[j] = logits[j];
        }
    }
  }
  return x;
}
