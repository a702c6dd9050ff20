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

/** One bad line of a dataset: its 1-based number and what is wrong with it. */
export interface SftLineProblem {
  line: number;
  reason: string;
}

/** How many bad lines a whole-file check lists one by one (the rest are counted), as the upload form does. */
export const MAX_LISTED_BAD_LINES = 20;

export class SftDataError extends Error {
  constructor(
    readonly file: string,
    /** The first bad line (0 means the file as a whole, e.g. missing, not one of its lines). */
    readonly line: number,
    readonly reason: string,
    /**
     * Every bad line a whole-file check found, the first included, up to MAX_LISTED_BAD_LINES, so that a file can
     * be fixed in one pass (issue 43: the API named only the first while the form named all).
     */
    readonly problems: SftLineProblem[] = [{ line, reason }],
    /** All bad lines, including those past the list's cap. */
    readonly total: number = problems.length,
  ) {
    const first = line > 0 ? `${file} line ${line}: ${reason}` : `${file}: ${reason}`;
    const others = problems.slice(1).map((p) => p.line);
    super(
      total > 1
        ? `${first} (and ${total - 1} more bad line${total > 2 ? 's' : ''}: ${others.join(', ')}${total > problems.length ? ', …' : ''})`
        : first,
    );
  }
}

export const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export function contentText(content: unknown): string | undefined {
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
