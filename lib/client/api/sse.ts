import { createParser, type EventSourceParser } from 'eventsource-parser';

/**
 * Server-Sent Events for fetch() bodies. EventSource cannot POST a JSON body, and the chat endpoint needs
 * one, so the playground reads the stream itself; the WHATWG framing (blank-line events, joined `data:`
 * lines, comments, CR/LF/CRLF line ends split anywhere across chunks) is eventsource-parser's.
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
  private readonly out: SseEvent[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: (e) => this.out.push({ event: e.event || 'message', data: e.data, ...(e.id ? { id: e.id } : {}) }),
  });

  push(text: string): SseEvent[] {
    this.parser.feed(text);
    return this.out.splice(0);
  }

  end(): SseEvent[] {
    // A server that closes right after its last `data:` line still meant that event (vLLM always ends with
    // a blank line, but a proxy may trim it): consume the pending text as if the blank line had come.
    this.parser.feed('\n\n');
    this.parser.reset();
    return this.out.splice(0);
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
 * status line went out (docs/contract.md §8.15: the HTTP status stays 200); anything else is a chunk for the caller
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
