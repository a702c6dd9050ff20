/**
 * Byte-level tokenizer: ids 0–255 are raw bytes, then special tokens, then optional BPE merges. Any text
 * round-trips (no unknown token), and a model trained on it needs no external vocabulary files.
 */

export const DEFAULT_SPECIAL_TOKENS = ['<|bos|>', '<|eos|>', '<|im_start|>', '<|im_end|>', '<|pad|>'] as const;

/** JSON-serialisable description, stored beside the weights. */
export interface TokenizerConfig {
  specialTokens: string[];
  /** Merge list in rank order; merge r creates id 256 + specialTokens.length + r from the pair. */
  merges: Array<[number, number]>;
  bos: string;
  eos: string;
  pad: string;
}

export function defaultTokenizerConfig(): TokenizerConfig {
  return { specialTokens: [...DEFAULT_SPECIAL_TOKENS], merges: [], bos: '<|bos|>', eos: '<|eos|>', pad: '<|pad|>' };
}

export interface EncodeOptions {
  /**
   * Recognise special-token strings in the text (default true): chat templates render `<|im_start|>` as
   * text, and HF tokenizers map it to the special id the same way.
   */
  parseSpecialTokens?: boolean;
  /** Prepend BOS (vLLM's add_special_tokens; chat requests default to false). */
  addBos?: boolean;
}

const utf8 = new TextEncoder();

/**
 * What detokenisation, logprobs and serving need of a tokenizer: the byte-level `Tokenizer` below and the
 * Hugging Face `HfTokenizer` both fit.
 */
export interface TokenPieces {
  readonly vocabSize: number;
  tokenBytes(id: number): Uint8Array;
  tokenText(id: number): string;
  isSpecial(id: number): boolean;
}

export class Tokenizer {
  readonly config: TokenizerConfig;
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  private readonly specialIds = new Map<string, number>();
  private readonly pieces: Uint8Array[] = []; // bytes of every id (specials: their UTF-8 text)
  private readonly mergeRank = new Map<number, number>(); // (a * vocab + b) → rank
  private readonly firstMergeId: number;
  private readonly specialPattern: RegExp | null;

  constructor(config: TokenizerConfig = defaultTokenizerConfig()) {
    this.config = config;
    for (let b = 0; b < 256; b++) this.pieces.push(Uint8Array.of(b));
    config.specialTokens.forEach((text, i) => {
      if (this.specialIds.has(text)) throw new Error(`duplicate special token ${text}`);
      this.specialIds.set(text, 256 + i);
      this.pieces.push(utf8.encode(text));
    });
    this.firstMergeId = 256 + config.specialTokens.length;
    config.merges.forEach(([a, b], r) => {
      const id = this.firstMergeId + r;
      if (!(a < id && b < id) || this.isSpecial(a) || this.isSpecial(b))
        throw new Error(`invalid merge ${r}: [${a}, ${b}]`);
      this.mergeRank.set(a * 1_000_003 + b, r);
      this.pieces.push(concat(this.pieces[a], this.pieces[b]));
    });
    this.vocabSize = this.pieces.length;
    this.bosId = this.requireSpecial(config.bos);
    this.eosId = this.requireSpecial(config.eos);
    this.padId = this.requireSpecial(config.pad);
    // Longest first so that a special token that prefixes another never wins by accident.
    const sorted = [...config.specialTokens].sort((x, y) => y.length - x.length);
    this.specialPattern = sorted.length
      ? new RegExp(sorted.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g')
      : null;
  }

  /** Id of a special token by its text, or undefined. */
  specialTokenId(text: string): number | undefined {
    return this.specialIds.get(text);
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < this.firstMergeId;
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const out: number[] = options.addBos ? [this.bosId] : [];
    if (options.parseSpecialTokens === false || !this.specialPattern) {
      this.encodeOrdinary(text, out);
      return out;
    }
    let last = 0;
    for (const m of text.matchAll(this.specialPattern)) {
      const at = m.index ?? 0;
      this.encodeOrdinary(text.slice(last, at), out);
      const id = this.specialIds.get(m[0]);
      // The pattern is built from specialIds' keys, so every match has an id.
      if (id === undefined) throw new Error(`unreachable: unknown special token ${m[0]}`);
      out.push(id);
      last = at + m[0].length;
    }
    this.encodeOrdinary(text.slice(last), out);
    return out;
  }

  /** Bytes of one token; special tokens give their text's UTF-8 (used for logprob `bytes`). */
  tokenBytes(id: number): Uint8Array {
    const piece = this.pieces[id];
    if (!piece) throw new RangeError(`token id ${id} is outside the vocabulary (${this.vocabSize})`);
    return piece;
  }

  /** Text of one token alone; a partial UTF-8 sequence becomes U+FFFD, as HF's convert_tokens_to_string does. */
  tokenText(id: number): string {
    return new TextDecoder().decode(this.tokenBytes(id));
  }

  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    const detok = new IncrementalDetokenizer(this, options);
    let text = '';
    for (let i = 0; i < ids.length; i++) text += detok.push(ids[i]);
    return text + detok.flush();
  }

  private requireSpecial(text: string): number {
    const id = this.specialIds.get(text);
    if (id === undefined) throw new Error(`special token ${text} is not in specialTokens`);
    return id;
  }

  private encodeOrdinary(text: string, out: number[]): void {
    if (!text) return;
    const bytes = utf8.encode(text);
    if (this.mergeRank.size === 0) {
      for (const b of bytes) out.push(b);
      return;
    }
    for (const chunk of pretokenize(bytes)) this.applyMerges(chunk, out);
  }

  /** Classic rank-ordered BPE inside one pre-token: repeatedly merge the lowest-ranked adjacent pair. */
  private applyMerges(ids: number[], out: number[]): void {
    while (ids.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < ids.length; i++) {
        const r = this.mergeRank.get(ids[i] * 1_000_003 + ids[i + 1]);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      ids.splice(best, 2, this.firstMergeId + bestRank);
    }
    for (const id of ids) out.push(id);
  }
}

/**
 * Splits bytes into pre-tokens so merges never cross word boundaries: a run of letters/digits/high bytes
 * with at most one leading space, or a run of other bytes. Simplified from GPT-2's regex, byte-based so
 * it needs no Unicode tables.
 */
function pretokenize(bytes: Uint8Array): number[][] {
  const chunks: number[][] = [];
  const isWord = (b: number) => (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b >= 128;
  let i = 0;
  while (i < bytes.length) {
    const start = i;
    if (bytes[i] === 32 && i + 1 < bytes.length && isWord(bytes[i + 1])) i++;
    if (isWord(bytes[i])) {
      while (i < bytes.length && isWord(bytes[i])) i++;
    } else {
      while (
        i < bytes.length &&
        !isWord(bytes[i]) &&
        !(bytes[i] === 32 && i + 1 < bytes.length && isWord(bytes[i + 1]) && i > start)
      )
        i++;
    }
    chunks.push(Array.from(bytes.subarray(start, i)));
  }
  return chunks;
}

/**
 * Learns `numMerges` BPE merges from sample texts (most frequent adjacent pair first, ties to the lowest
 * pair). Small and slow on purpose: it builds the optional merge table of a tokenizer trained on a corpus.
 */
export function trainBpeMerges(
  texts: string[],
  numMerges: number,
  base: TokenizerConfig = defaultTokenizerConfig(),
): TokenizerConfig {
  const firstId = 256 + base.specialTokens.length;
  const words = new Map<string, { ids: number[]; count: number }>();
  for (const t of texts) {
    for (const chunk of pretokenize(utf8.encode(t))) {
      const key = chunk.join(',');
      const w = words.get(key);
      if (w) w.count++;
      else words.set(key, { ids: chunk, count: 1 });
    }
  }
  const merges: Array<[number, number]> = [];
  for (let r = 0; r < numMerges; r++) {
    const pairs = new Map<string, number>();
    for (const { ids, count } of words.values()) {
      for (let i = 0; i + 1 < ids.length; i++) {
        const key = `${ids[i]},${ids[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + count);
      }
    }
    let bestKey = '';
    let bestCount = 1; // a pair seen once is not worth a token
    for (const [key, count] of pairs) {
      if (count > bestCount || (count === bestCount && bestKey && comparePairs(key, bestKey) < 0)) {
        bestKey = key;
        bestCount = count;
      }
    }
    if (!bestKey) break;
    const [a, b] = bestKey.split(',').map(Number);
    const id = firstId + r;
    merges.push([a, b]);
    for (const w of words.values()) {
      const next: number[] = [];
      for (let i = 0; i < w.ids.length; i++) {
        if (i + 1 < w.ids.length && w.ids[i] === a && w.ids[i + 1] === b) {
          next.push(id);
          i++;
        } else next.push(w.ids[i]);
      }
      w.ids = next;
    }
  }
  return { ...base, merges };
}

function comparePairs(x: string, y: string): number {
  const [xa, xb] = x.split(',').map(Number);
  const [ya, yb] = y.split(',').map(Number);
  return xa - ya || xb - yb;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Streaming detokenizer: `push` returns only complete characters, holding back a UTF-8 sequence split
 * across tokens until its last byte arrives, so a stream never emits a broken character. Invalid
 * sequences become U+FFFD exactly as a whole-text decode would.
 */
export class IncrementalDetokenizer {
  private decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  private readonly skipSpecial: boolean;

  constructor(
    private readonly tokenizer: TokenPieces,
    options: { skipSpecialTokens?: boolean } = {},
  ) {
    this.skipSpecial = options.skipSpecialTokens ?? false;
  }

  push(id: number): string {
    if (this.tokenizer.isSpecial(id)) {
      // A special token ends any pending partial character first, as a whole-text decode would see it.
      const pending = this.decoder.decode();
      return this.skipSpecial ? pending : pending + this.tokenizer.tokenText(id);
    }
    return this.decoder.decode(this.tokenizer.tokenBytes(id), { stream: true });
  }

  /** Emits whatever is still held back (an unfinished sequence becomes U+FFFD) and resets. */
  flush(): string {
    return this.decoder.decode();
  }
}
