/**
 * A small Server-Sent Events reader for fetch() bodies. EventSource cannot POST a JSON body, and the
 * chat endpoint needs one, so the playground reads the stream itself. The framing follows the WHATWG
 * rules the chat server (and vLLM, and OpenAI) rely on: events end at a blank line, `data:` lines of one
 * event are joined with "\n", a single space after the colon is dropped, lines starting with ":" are
 * comments, and CR, LF and CRLF all end a line.
 */

export interface SseEvent {
  /** The `event:` field; "message" when absent, as in EventSource. */
  event: string;
  data: string;
  id?: string;
}

/**
 * An incremental parser: `push()` text as it arrives (chunks may split lines, even a CRLF pair) and get
 * back the events completed so far; `end()` flushes an event the stream ended without a blank line after.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private sawField = false;
  /** A chunk ended with "\r": a "\n" starting the next chunk belongs to the same line break. */
  private pendingCr = false;

  push(text: string): SseEvent[] {
    let input = text;
    if (this.pendingCr && input.startsWith('\n')) input = input.slice(1);
    this.pendingCr = false;
    this.buffer += input;
    const out: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone trailing "\r" may be the first half of a CRLF split across chunks: take it as a line end now
      // and remember to swallow the "\n".
      if (match[0] === '\r' && match.index === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event) out.push(event);
    }
    return out;
  }

  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer !== '') {
      const event = this.line(this.buffer);
      this.buffer = '';
      if (event) out.push(event);
    }
    const last = this.dispatch();
    if (last) out.push(last);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.sawField = true;
    } else if (field === 'event') {
      this.event = value;
      this.sawField = true;
    } else if (field === 'id' && !value.includes('\0')) {
      this.id = value;
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const had = this.sawField && this.data.length > 0;
    const event: SseEvent = { event: this.event || 'message', data: this.data.join('\n'), ...(this.id ? { id: this.id } : {}) };
    this.data = [];
    this.event = '';
    this.sawField = false;
    // An event with no data line is not dispatched (WHATWG); `id` persists across events there, but the
    // chat stream never sends ids, so it is kept per event here for simplicity.
    this.id = undefined;
    return had ? event : null;
  }
}

/** Reads a fetch() body as SSE events, decoding UTF-8 across chunk boundaries. */
export async function* readSseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode());
    yield* parser.end();
  } finally {
    reader.releaseLock();
  }
}

/** What one `data:` payload of an OpenAI-style stream means. */
export type ChatStreamMessage =
  | { kind: 'done' }
  | { kind: 'chunk'; value: unknown }
  | { kind: 'error'; message: string; code: number | null }
  | { kind: 'invalid'; data: string };

/**
 * `[DONE]` ends the stream; a payload with an `error` object is the in-band failure vLLM sends after the
 * status line went out (compat §7.15: the HTTP status stays 200); anything else is a chunk for the caller
 * to validate. Text that is not JSON is reported, not thrown, so one bad event cannot lose the rest.
 */
export function interpretChatEvent(data: string): ChatStreamMessage {
  if (data.trim() === '[DONE]') return { kind: 'done' };
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { kind: 'invalid', data };
  }
  if (value && typeof value === 'object' && 'error' in value) {
    const error = (value as { error: unknown }).error;
    if (error && typeof error === 'object') {
      const { message, code } = error as { message?: unknown; code?: unknown };
      return {
        kind: 'error',
        message: typeof message === 'string' && message ? message : 'The stream failed.',
        code: typeof code === 'number' ? code : null,
      };
    }
    return { kind: 'error', message: typeof error === 'string' ? error : 'The stream failed.', code: null };
  }
  return { kind: 'chunk', value };
}
