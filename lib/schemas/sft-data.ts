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
