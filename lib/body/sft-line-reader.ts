import { concatBytes } from '@/lib/bytes';
import { MAX_LISTED_BAD_LINES, parseSftLine, SftDataError, type SftLineProblem } from '@/lib/schemas/sft-data';

/**
 * Validates a JSONL file fed as bytes, chunk by chunk (the dataset thread, sft-lines-thread.ts): each
 * line is parsed when its newline arrives, so only one line is ever held, and a line longer than `maxLineBytes`
 * is refused as soon as it passes the limit (a 156 MB line was held and parsed whole before). Lines end at `\n`
 * (a `\r` before it is dropped), as parseSftJsonl, which training uses, splits them; blank lines are skipped.
 * A bad line does not stop the check: every one is collected and end() reports them together, so an API upload
 * names all of them as the dashboard's form does. A line past the limit does stop it (the rest is not read).
 */
export class SftLineReader {
  private parts: Uint8Array[] = [];
  private held = 0;
  private lineNo = 0;
  /** Examples (non-blank lines) validated so far. */
  count = 0;
  private problems: SftLineProblem[] = [];
  private bad = 0;

  constructor(
    private readonly file: string,
    private readonly maxLineBytes: number,
    /** Named in the refusal of a long line: the setting that raises the limit. */
    private readonly limitSetting: string,
  ) {}

  /** Throws SftDataError at once only for a line past the limit (with the bad lines found before it). */
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

  /** The last line (no newline after it); returns the number of examples, or throws naming every bad line. */
  end(): number {
    if (this.held > 0 || this.parts.length > 0) this.line();
    if (this.bad > 0) throw this.failure();
    return this.count;
  }

  private note(line: number, reason: string) {
    this.bad++;
    if (this.problems.length < MAX_LISTED_BAD_LINES) this.problems.push({ line, reason });
  }

  private failure(): SftDataError {
    const [first] = this.problems;
    return new SftDataError(this.file, first.line, first.reason, this.problems, this.bad);
  }

  private hold(bytes: Uint8Array) {
    this.held += bytes.byteLength;
    if (this.held > this.maxLineBytes) {
      this.note(this.lineNo + 1, `longer than ${this.maxLineBytes} bytes (${this.limitSetting})`);
      throw this.failure();
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
    try {
      parseSftLine(this.file, this.lineNo, text);
      this.count++;
    } catch (err) {
      if (!(err instanceof SftDataError)) throw err;
      this.note(err.line, err.reason);
    }
  }
}

const decoder = new TextDecoder();
