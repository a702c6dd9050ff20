import { TokenizerLoader } from '@lenml/tokenizers';

/**
 * A Hugging Face `tokenizer.json` (byte-level BPE: Llama 3, Qwen2.5/3, SmolLM2) behind the interface the
 * engine's generation, logprobs and constrained decoding use. Encoding goes through @lenml/tokenizers (a
 * dependency-free port of transformers.js' tokenizers, checked id for id against the Python `tokenizers`
 * library in hf.test.ts); the bytes of each token come from the vocabulary through GPT-2's byte↔unicode
 * table, so streaming detokenisation, logprob `bytes` and grammar masks work on exact bytes.
 */

interface AddedTokenJson {
  id: number;
  content: string;
  special?: boolean;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** GPT-2's bytes_to_unicode, inverted: code point → byte. */
function unicodeToByte(): Map<number, number> {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const map = new Map<number, number>();
  bs.forEach((b, i) => map.set(cs[i], b));
  return map;
}

const utf8 = new TextEncoder();

export interface HfEncodeOptions {
  /** Apply the tokenizer's post-processor (e.g. a BOS token); chat prompts are encoded without. */
  addSpecialTokens?: boolean;
}

export class HfTokenizer {
  readonly vocabSize: number;
  readonly bosId: number | undefined;
  /** The tokenizer config's eos_token (end of turn for chat models). */
  readonly eosId: number | undefined;
  readonly bosToken: string | undefined;
  readonly eosToken: string | undefined;
  readonly chatTemplate: string | null;
  private readonly pieces: Array<Uint8Array | undefined>;
  private readonly special = new Set<number>();
  private readonly ids = new Map<string, number>();
  private readonly tok: ReturnType<typeof TokenizerLoader.fromPreTrained>;

  /**
   * @param tokenizerJson parsed tokenizer.json
   * @param tokenizerConfig parsed tokenizer_config.json (chat template, bos/eos names)
   * @param vocabSize the model's vocabulary (≥ the tokenizer's; ids past the tokenizer decode to nothing)
   */
  constructor(tokenizerJson: unknown, tokenizerConfig: unknown, vocabSize?: number) {
    if (!isRecord(tokenizerJson) || !isRecord(tokenizerJson.model)) throw new Error('tokenizer.json: not a tokenizer');
    const model = tokenizerJson.model;
    if (model.type !== 'BPE' || !isRecord(model.vocab)) {
      throw new Error(
        `tokenizer.json: model type ${JSON.stringify(model.type)} is not supported (byte-level BPE only)`,
      );
    }
    const decoder = tokenizerJson.decoder;
    if (!isRecord(decoder) || decoder.type !== 'ByteLevel') {
      throw new Error('tokenizer.json: only byte-level tokenizers (decoder ByteLevel) are supported');
    }
    const config = isRecord(tokenizerConfig) ? tokenizerConfig : {};
    const table = unicodeToByte();
    let maxId = -1;
    const vocabEntries = Object.entries(model.vocab as Record<string, unknown>);
    for (const [, id] of vocabEntries) if (typeof id === 'number' && id > maxId) maxId = id;
    const added = Array.isArray(tokenizerJson.added_tokens) ? (tokenizerJson.added_tokens as AddedTokenJson[]) : [];
    for (const t of added) if (t.id > maxId) maxId = t.id;
    this.vocabSize = Math.max(maxId + 1, vocabSize ?? 0);
    this.pieces = new Array<Uint8Array | undefined>(this.vocabSize);
    for (const [text, id] of vocabEntries) {
      if (typeof id !== 'number') continue;
      const bytes: number[] = [];
      for (const ch of text) {
        const b = table.get(ch.codePointAt(0)!);
        if (b === undefined) throw new Error(`tokenizer.json: token ${JSON.stringify(text)} is not byte-level`);
        bytes.push(b);
      }
      this.pieces[id] = Uint8Array.from(bytes);
      this.ids.set(text, id);
    }
    for (const t of added) {
      // Added tokens are stored as plain text (not byte-level): `<think>` decodes to its own UTF-8.
      this.pieces[t.id] = utf8.encode(t.content);
      this.ids.set(t.content, t.id);
      if (t.special) this.special.add(t.id);
    }
    const name = (v: unknown): string | undefined =>
      typeof v === 'string' ? v : isRecord(v) && typeof v.content === 'string' ? v.content : undefined;
    this.bosToken = name(config.bos_token);
    this.eosToken = name(config.eos_token);
    this.bosId = this.bosToken !== undefined ? this.ids.get(this.bosToken) : undefined;
    this.eosId = this.eosToken !== undefined ? this.ids.get(this.eosToken) : undefined;
    this.chatTemplate = typeof config.chat_template === 'string' ? config.chat_template : null;
    this.tok = TokenizerLoader.fromPreTrained({
      tokenizerJSON: tokenizerJson as never,
      tokenizerConfig: config as never,
    });
  }

  /** Token ids of `text`; special-token strings in the text become their ids (HF's default). */
  encode(text: string, options: HfEncodeOptions = {}): number[] {
    return this.tok.encode(text, { add_special_tokens: options.addSpecialTokens ?? false });
  }

  decode(ids: ArrayLike<number>, options: { skipSpecialTokens?: boolean } = {}): string {
    const parts: Uint8Array[] = [];
    let size = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (options.skipSpecialTokens && this.isSpecial(id)) continue;
      const p = this.tokenBytes(id);
      parts.push(p);
      size += p.length;
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new TextDecoder().decode(all);
  }

  tokenId(text: string): number | undefined {
    return this.ids.get(text);
  }

  /** Same as tokenId, under the engine tokenizer's name. */
  specialTokenId(text: string): number | undefined {
    return this.ids.get(text);
  }

  /** Special added tokens, and ids the model has but the tokenizer lacks (never content). */
  isSpecial(id: number): boolean {
    return this.special.has(id) || (id >= 0 && id < this.vocabSize && this.pieces[id] === undefined);
  }

  tokenBytes(id: number): Uint8Array {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new RangeError(`token id ${id} is outside the vocabulary (${this.vocabSize})`);
    }
    return this.pieces[id] ?? new Uint8Array(0);
  }

  tokenText(id: number): string {
    return new TextDecoder().decode(this.tokenBytes(id));
  }
}
