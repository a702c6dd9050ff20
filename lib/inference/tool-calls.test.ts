import { describe, expect, it } from 'vitest';
import { newToolCallId, parseToolCalls, ToolCallStreamParser, type ToolCallDelta } from './tool-calls';

function ids() {
  let n = 0;
  return () => `chatcmpl-tool-${String(++n).padStart(32, '0')}`;
}
const id = (n: number) => `chatcmpl-tool-${String(n).padStart(32, '0')}`;

describe('parseToolCalls (hermes, non-stream, docs/contract.md §8.12)', () => {
  it('extracts calls, arguments as Python json.dumps text, content before the first block', () => {
    const text =
      'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris","days":2,"units":1.0}}\n</tool_call>';
    expect(parseToolCalls(text, { parallelToolCalls: true, newId: ids() })).toEqual({
      content: 'Let me check.\n',
      toolCalls: [
        {
          id: id(1),
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city": "Paris", "days": 2, "units": 1.0}' },
        },
      ],
    });
  });

  it('content is null when the text starts with a block; several blocks give several calls', () => {
    const text =
      '<tool_call>{"name":"a","arguments":{}}</tool_call>\n<tool_call>{"name":"b","arguments":{"x":"é"}}</tool_call>';
    const parsed = parseToolCalls(text, { parallelToolCalls: true, newId: ids() });
    expect(parsed.content).toBeNull();
    expect(parsed.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      [id(1), 'a', '{}'],
      [id(2), 'b', '{"x": "é"}'],
    ]);
  });

  it('parallel_tool_calls false keeps the first call', () => {
    const text = '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>';
    expect(
      parseToolCalls(text, { parallelToolCalls: false, newId: ids() }).toolCalls.map((c) => c.function.name),
    ).toEqual(['a']);
  });

  it('an unclosed last block is parsed to the end of the text', () => {
    const parsed = parseToolCalls('x<tool_call>{"name":"a","arguments":[1]}', {
      parallelToolCalls: true,
      newId: ids(),
    });
    expect(parsed).toEqual({
      content: 'x',
      toolCalls: [{ id: id(1), type: 'function', function: { name: 'a', arguments: '[1]' } }],
    });
  });

  it.each([
    'no tool call here',
    '<tool_call>not json</tool_call>',
    '<tool_call>{"name":"a"}</tool_call>',
    '<tool_call>{"arguments":{}}</tool_call>',
    '<tool_call>{"name":5,"arguments":{}}</tool_call>',
    '<tool_call>["a"]</tool_call>',
    '<tool_call></tool_call>',
    '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>broken</tool_call>',
  ])('anything that does not parse leaves the whole text as content: %j', (text) => {
    expect(parseToolCalls(text, { parallelToolCalls: true })).toEqual({ content: text, toolCalls: [] });
  });

  it('keeps an empty text as empty content', () => {
    expect(parseToolCalls('', { parallelToolCalls: true })).toEqual({ content: '', toolCalls: [] });
  });

  it('makes chatcmpl-tool-<32 hex> ids by default', () => {
    expect(newToolCallId()).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
  });
});

function feed(parser: ToolCallStreamParser, pieces: string[]): ToolCallDelta {
  const out: ToolCallDelta = { content: '', toolCalls: [] };
  const contentPieces: string[] = [];
  for (const piece of pieces) {
    const d = parser.push(piece);
    contentPieces.push(d.content);
    out.toolCalls.push(...d.toolCalls);
  }
  const end = parser.finish();
  contentPieces.push(end.content);
  out.toolCalls.push(...end.toolCalls);
  out.content = contentPieces.join('');
  return out;
}

describe('ToolCallStreamParser', () => {
  it('streams content, holds a possible <tool_call> prefix, emits each call when its block closes', () => {
    const p = new ToolCallStreamParser({ parallelToolCalls: true, newId: ids() });
    expect(p.push('Sure')).toEqual({ content: 'Sure', toolCalls: [] });
    expect(p.push('. <tool')).toEqual({ content: '. ', toolCalls: [] });
    expect(p.push('_call>{"name": "f", ')).toEqual({ content: '', toolCalls: [] });
    expect(p.push('"arguments": {"a": 1}}</tool_call>\n<tool_call>{"name":"g","arguments":{}}')).toEqual({
      content: '',
      toolCalls: [{ index: 0, id: id(1), type: 'function', function: { name: 'f', arguments: '{"a": 1}' } }],
    });
    expect(p.push('</tool_call>')).toEqual({
      content: '',
      toolCalls: [{ index: 1, id: id(2), type: 'function', function: { name: 'g', arguments: '{}' } }],
    });
    expect(p.finish()).toEqual({ content: '', toolCalls: [] });
    expect(p.called).toBe(true);
  });

  it('releases a held prefix that did not become a block', () => {
    const p = new ToolCallStreamParser({ parallelToolCalls: true });
    expect(p.push('a <tool')).toEqual({ content: 'a ', toolCalls: [] });
    expect(p.push('s>')).toEqual({ content: '<tools>', toolCalls: [] });
    expect(p.push('<')).toEqual({ content: '', toolCalls: [] });
    expect(p.finish()).toEqual({ content: '<', toolCalls: [] });
    expect(p.called).toBe(false);
  });

  it('agrees with the non-stream parser on every split of a well-formed output', () => {
    const text =
      'Hi <tool_call>{"name":"a","arguments":{"q":"x"}}</tool_call> <tool_call>{"name":"b","arguments":{}}</tool_call>';
    const whole = parseToolCalls(text, { parallelToolCalls: true, newId: ids() });
    for (let cut = 0; cut <= text.length; cut++) {
      const streamed = feed(new ToolCallStreamParser({ parallelToolCalls: true, newId: ids() }), [
        text.slice(0, cut),
        text.slice(cut),
      ]);
      expect(streamed.content).toBe(whole.content ?? '');
      expect(streamed.toolCalls.map(({ index: _index, ...call }) => call)).toEqual(whole.toolCalls);
    }
  });

  it('parses an unclosed last block at the end', () => {
    const out = feed(new ToolCallStreamParser({ parallelToolCalls: true, newId: ids() }), [
      '<tool_call>{"name":"a",',
      '"arguments":{}}',
    ]);
    expect(out.toolCalls).toEqual([
      { index: 0, id: id(1), type: 'function', function: { name: 'a', arguments: '{}' } },
    ]);
  });

  it('gives the text back as content when no call parsed', () => {
    const out = feed(new ToolCallStreamParser({ parallelToolCalls: true }), [
      'pre ',
      '<tool_call>oops</tool_call> after',
    ]);
    expect(out).toEqual({ content: 'pre <tool_call>oops</tool_call> after', toolCalls: [] });
  });

  it('parallel_tool_calls false emits only the first call', () => {
    const out = feed(new ToolCallStreamParser({ parallelToolCalls: false, newId: ids() }), [
      '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>',
    ]);
    expect(out.toolCalls.map((c) => c.function.name)).toEqual(['a']);
  });
});
