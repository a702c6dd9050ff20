import { concatBytes } from '@/lib/bytes';
import { parseSftLine, SftDataError } from '@/lib/schemas/sft-data';

/**
 * Validates a JSONL file fed as bytes, chunk by chunk (the dataset thread, sft-lines-thread.ts): each
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
    const bytes = this.parts.length === 1 ? this.parts[0] : concatBytes(this.parts);
    this.parts = [];
    this.held = 0;
    const text = decoder.decode(bytes).replace(/\r$/, '');
    if (text.trim() === '') return;
    parseSftLine(this.file, this.lineNo, text);
    this.count++;
  }
}

const decoder = new TextDecoder();
