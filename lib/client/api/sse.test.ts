import { describe, expect, it } from 'vitest';
import { interpretChatEvent, readSseEvents, SseParser } from './sse';

function parseAll(chunks: string[]) {
  const parser = new SseParser();
  return [...chunks.flatMap((c) => parser.push(c)), ...parser.end()];
}

describe('SseParser', () => {
  it('splits events on blank lines', () => {
    const events = parseAll(['data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n']);
    expect(events.map((e) => e.data)).toEqual(['{"a":1}', '{"a":2}', '[DONE]']);
    expect(events[0].event).toBe('message');
  });

  it('joins multi-line data with newlines and drops one leading space only', () => {
    const events = parseAll(['data: line one\ndata:  indented\ndata:no-space\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'line one\n indented\nno-space' }]);
  });

  it('reassembles events split anywhere across chunks, CRLF included', () => {
    const text = 'event: error\r\ndata: {"x":\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      const events = parseAll([text.slice(0, cut), text.slice(cut)]);
      expect(events, `cut at ${cut}`).toEqual([
        { event: 'error', data: '{"x":\n1}' },
        { event: 'message', data: '[DONE]' },
      ]);
    }
  });

  it('ignores comments and events without data, keeps ids', () => {
    const events = parseAll([': keep-alive\n\nevent: ping\n\nid: 7\ndata: x\n\n']);
    expect(events).toEqual([{ event: 'message', data: 'x', id: '7' }]);
  });

  it('flushes a final event that lacks the closing blank line', () => {
    expect(parseAll(['data: last']).map((e) => e.data)).toEqual(['last']);
  });
});

describe('readSseEvents', () => {
  it('decodes UTF-8 split across network chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo 🌍"}\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    });
    const out = [];
    for await (const event of readSseEvents(body)) out.push(event.data);
    expect(out).toEqual(['{"t":"héllo 🌍"}']);
  });
});

describe('interpretChatEvent', () => {
  it('recognises [DONE], chunks, error events and garbage', () => {
    expect(interpretChatEvent('[DONE]')).toEqual({ kind: 'done' });
    expect(interpretChatEvent('{"id":"x","choices":[]}')).toEqual({ kind: 'chunk', value: { id: 'x', choices: [] } });
    expect(
      interpretChatEvent(
        '{"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}',
      ),
    ).toEqual({ kind: 'error', message: 'Internal server error', code: 500 });
    expect(interpretChatEvent('{"error":"boom"}')).toEqual({ kind: 'error', message: 'boom', code: null });
    expect(interpretChatEvent('not json')).toEqual({ kind: 'invalid', data: 'not json' });
  });
});
