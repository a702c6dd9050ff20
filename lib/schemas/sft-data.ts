import { JSON_TOO_DEEP_MESSAGE, jsonNestingExceeds } from './json-depth';

/**
 * SFT dataset lines as ART writes them (docs/contract.md §3.2): one JSON object per line with a non-empty `messages`
 * array ending in an assistant message, optional `tools`. Blank lines are skipped.
 */
export interface SftExample {
  line: number;
  messages: { role: string; content: string; [key: string]: unknown }[];
  tools?: unknown[];
}

export class SftDataError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    // Line 0 means the file as a whole (e.g. missing), not one of its lines.
    super(line > 0 ? `${file} line ${line}: ${reason}` : `${file}: ${reason}`);
  }
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function contentText(content: unknown): string | undefined {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      if (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text') {
        const text = (part as { text?: unknown }).text;
        if (typeof text !== 'string') return undefined;
        parts.push(text);
      } else return undefined;
    }
    return parts.join('\n');
  }
  return undefined;
}

export function parseSftLine(file: string, lineNo: number, text: string): SftExample {
  let value: unknown;
  if (jsonNestingExceeds(text)) throw new SftDataError(file, lineNo, JSON_TOO_DEEP_MESSAGE);
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SftDataError(file, lineNo, `invalid JSON (${(err as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new SftDataError(file, lineNo, 'expected a JSON object');
  const { messages, tools } = value as { messages?: unknown; tools?: unknown };
  if (!Array.isArray(messages)) throw new SftDataError(file, lineNo, '"messages" must be an array');
  if (messages.length === 0) throw new SftDataError(file, lineNo, '"messages" must not be empty');
  const out: SftExample['messages'] = [];
  messages.forEach((m, i) => {
    if (!m || typeof m !== 'object' || Array.isArray(m))
      throw new SftDataError(file, lineNo, `message ${i + 1} is not an object`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw new SftDataError(
        file,
        lineNo,
        `message ${i + 1} has role ${JSON.stringify(role)}; expected one of ${[...ROLES].join(', ')}`,
      );
    }
    const textContent = contentText(content);
    if (textContent === undefined)
      throw new SftDataError(file, lineNo, `message ${i + 1} content must be a string, text parts or null`);
    out.push({ ...(m as Record<string, unknown>), role, content: textContent });
  });
  if (out[out.length - 1].role !== 'assistant')
    throw new SftDataError(file, lineNo, 'last message must have role "assistant"');
  if (tools !== undefined && tools !== null && !Array.isArray(tools))
    throw new SftDataError(file, lineNo, '"tools" must be an array');
  return { line: lineNo, messages: out, ...(Array.isArray(tools) && tools.length ? { tools } : {}) };
}

/** Parses a whole JSONL file; the first bad line is reported with its 1-based number. */
export function parseSftJsonl(file: string, text: string): SftExample[] {
  const examples: SftExample[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (line.trim() === '') continue;
    examples.push(parseSftLine(file, i + 1, line));
  }
  return examples;
}

/**
 * Validates a JSONL file fed as bytes, chunk by chunk (the dataset thread, lib/body/sft-lines-thread.ts): each
 * line is parsed when its newline arrives, so only one line is ever held, and a line longer than `maxLineBytes`
 * is refused as soon as it passes the limit (a 156 MB line was held and parsed whole before). Lines end at `\n`
 * (a `\r` before it is dropped), as parseSftJsonl, which training uses, splits them; blank lines are skipped.
 */
export class SftLineReader {
  private parts: Uint8Array[] = [];
  private held = 0;
  private lineNo = 0;
  /** Examples (non-blank lines) validated so far. */
  count = 0;

  constructor(
    private readonly file: string,
    private readonly maxLineBytes: number,
    /** Named in the refusal of a long line: the setting that raises the limit. */
    private readonly limitSetting: string,
  ) {}

  /** Throws SftDataError at the first bad line. */
  push(bytes: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      if (nl < 0) break;
      this.hold(bytes.subarray(start, nl));
      this.line();
      start = nl + 1;
    }
    // Copied: the caller's buffer may be reused or transferred.
    if (start < bytes.byteLength) this.hold(bytes.slice(start));
  }

  /** The last line (no newline after it); returns the number of examples. */
  end(): number {
    if (this.held > 0 || this.parts.length > 0) this.line();
    return this.count;
  }

  private hold(bytes: Uint8Array) {
    this.held += bytes.byteLength;
    if (this.held > this.maxLineBytes) {
      throw new SftDataError(
        this.file,
        this.lineNo + 1,
        `longer than ${this.maxLineBytes} bytes (${this.limitSetting})`,
      );
    }
    if (bytes.byteLength > 0) this.parts.push(bytes);
  }

  private line() {
    this.lineNo++;
    const bytes = this.parts.length === 1 ? this.parts[0] : concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    const text = decoder.decode(bytes).replace(/\r$/, '');
    if (text.trim() === '') return;
    parseSftLine(this.file, this.lineNo, text);
    this.count++;
  }
}

const decoder = new TextDecoder();

function concat(parts: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
