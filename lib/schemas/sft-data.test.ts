import { describe, expect, it } from 'vitest';
import { parseSftJsonl, SftDataError, validateSftLines } from './sft-data';

const line = (value: unknown) => JSON.stringify(value);
const ok = (q = 'q', a = 'a') =>
  line({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });

function errorOf(text: string, file = 'train.jsonl'): SftDataError {
  try {
    parseSftJsonl(file, text);
  } catch (err) {
    expect(err).toBeInstanceOf(SftDataError);
    return err as SftDataError;
  }
  throw new Error('expected parseSftJsonl to throw');
}

describe('parseSftJsonl', () => {
  it('parses one example per line, skipping blank lines and keeping 1-based line numbers', () => {
    const text = ['', ok('one', '1'), '   ', ok('two', '2'), ''].join('\n');
    const examples = parseSftJsonl('train.jsonl', text);
    expect(examples.map((e) => e.line)).toEqual([2, 4]);
    expect(examples[1].messages).toEqual([
      { role: 'user', content: 'two' },
      { role: 'assistant', content: '2' },
    ]);
    expect(parseSftJsonl('train.jsonl', '')).toEqual([]);
    expect(parseSftJsonl('train.jsonl', '\n\n')).toEqual([]);
  });

  it('accepts CRLF line endings', () => {
    expect(parseSftJsonl('train.jsonl', `${ok()}\r\n${ok()}\r\n`)).toHaveLength(2);
  });

  it('reads content null as "", joins text parts with newlines, and keeps other message keys', () => {
    const [example] = parseSftJsonl(
      'train.jsonl',
      line({
        messages: [
          { role: 'developer', content: null },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', content: '42', tool_call_id: 'c1' },
          { role: 'assistant', content: 'done' },
        ],
      }),
    );
    expect(example.messages.map((m) => [m.role, m.content])).toEqual([
      ['developer', ''],
      ['user', 'a\nb'],
      ['assistant', ''],
      ['tool', '42'],
      ['assistant', 'done'],
    ]);
    expect(example.messages[2].tool_calls).toHaveLength(1);
    expect(example.messages[3].tool_call_id).toBe('c1');
  });

  it('keeps non-empty tools and drops empty or null ones', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: {} } }];
    const messages = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ];
    expect(parseSftJsonl('t.jsonl', line({ messages, tools }))[0].tools).toEqual(tools);
    expect(parseSftJsonl('t.jsonl', line({ messages, tools: [] }))[0]).not.toHaveProperty('tools');
    expect(parseSftJsonl('t.jsonl', line({ messages, tools: null }))[0]).not.toHaveProperty('tools');
  });

  it('names the file and line of the first bad line', () => {
    const text = [ok(), '', line({ messages: [{ role: 'user', content: 'no answer' }] }), ok()].join('\n');
    const err = errorOf(text);
    expect(err.message).toBe('train.jsonl line 3: last message must have role "assistant"');
    expect([err.file, err.line, err.reason]).toEqual(['train.jsonl', 3, 'last message must have role "assistant"']);
  });

  it.each([
    ['{"messages": [', /^data\.jsonl line 1: invalid JSON/],
    ['[1, 2]', /^data\.jsonl line 1: expected a JSON object$/],
    ['"text"', /^data\.jsonl line 1: expected a JSON object$/],
    ['null', /^data\.jsonl line 1: expected a JSON object$/],
    [line({ prompt: 'x' }), /^data\.jsonl line 1: "messages" must be an array$/],
    [line({ messages: [] }), /^data\.jsonl line 1: "messages" must not be empty$/],
    [line({ messages: ['hi'] }), /^data\.jsonl line 1: message 1 is not an object$/],
    [line({ messages: [{ role: 'robot', content: 'x' }] }), /^data\.jsonl line 1: message 1 has role "robot"/],
    [line({ messages: [{ content: 'x' }] }), /^data\.jsonl line 1: message 1 has role undefined/],
    [line({ messages: [{ role: 'assistant', content: 7 }] }), /^data\.jsonl line 1: message 1 content must be/],
    [line({ messages: [{ role: 'assistant', content: [{ type: 'image_url' }] }] }), /message 1 content must be/],
    [
      line({ messages: [{ role: 'assistant', content: 'a' }], tools: {} }),
      /^data\.jsonl line 1: "tools" must be an array$/,
    ],
  ])('rejects %s', (text, pattern) => {
    expect(errorOf(text, 'data.jsonl').message).toMatch(pattern);
  });
});

describe('validateSftLines', () => {
  async function* lines(...items: string[]) {
    for (const item of items) yield item;
  }

  it('counts examples, skipping blank lines, and reports the first bad line like parseSftJsonl', async () => {
    expect(await validateSftLines('train.jsonl', lines(ok(), '', `${ok()}\r`))).toBe(2);
    expect(await validateSftLines('train.jsonl', lines())).toBe(0);
    await expect(validateSftLines('train.jsonl', lines(ok(), '  ', '{'))).rejects.toThrow(
      /^train\.jsonl line 3: invalid JSON/,
    );
  });
});
