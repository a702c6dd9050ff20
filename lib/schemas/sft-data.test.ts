import { describe, expect, it } from 'vitest';
import { SftLineReader } from '@/lib/body/sft-line-reader';
import { parseSftJsonl, SftDataError } from './sft-data';

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

// lib/body/sft-line-reader.ts, tested here beside the line rules it applies (parseSftJsonl's, above).
describe('SftLineReader', () => {
  /** Feeds `text` in chunks of `size` bytes (lines and multi-byte characters split across chunks). */
  function read(text: string, size: number, maxLineBytes = 1024) {
    const reader = new SftLineReader('train.jsonl', maxLineBytes, 'THE_LIMIT');
    const bytes = new TextEncoder().encode(text);
    for (let at = 0; at < bytes.length; at += size) reader.push(bytes.subarray(at, at + size));
    return reader.end();
  }

  it('counts examples, skipping blank lines, and reports the first bad line like parseSftJsonl', () => {
    for (const size of [1, 3, 7, 4096]) {
      expect(read(`${ok()}\n\n${ok()}\r\n`, size)).toBe(2);
      expect(read(`${ok()}\n${line({ messages: [{ role: 'assistant', content: 'é😀' }] })}`, size)).toBe(2);
      expect(read('', size)).toBe(0);
      expect(() => read(`${ok()}\n  \n{`, size)).toThrow(/^train\.jsonl line 3: invalid JSON/);
    }
  });

  it('goes on past a bad line and names every one, the first in the message', () => {
    for (const size of [1, 5, 4096]) {
      const err = (() => {
        try {
          read(`{\n${ok()}\n[]\n${ok()}\n"x"`, size);
        } catch (e) {
          return e as SftDataError;
        }
      })();
      expect(err).toBeInstanceOf(SftDataError);
      expect(err!.problems.map((p) => p.line)).toEqual([1, 3, 5]);
      expect(err!.total).toBe(3);
      expect(err!.message).toMatch(/^train\.jsonl line 1: invalid JSON.* \(and 2 more bad lines: 3, 5\)$/);
    }
  });

  it('refuses a line past the limit as soon as it passes it, naming the line and the setting', () => {
    const long = line({ messages: [{ role: 'assistant', content: 'x'.repeat(200) }] });
    expect(read(`${ok()}\n${long}\n`, 16, 4096)).toBe(2);
    expect(() => read(`${ok()}\n${long}\n`, 16, 100)).toThrow('train.jsonl line 2: longer than 100 bytes (THE_LIMIT)');
    // The limit counts the line's bytes, not its newline.
    const exact = new TextEncoder().encode(long).length;
    expect(read(`${long}\n`, 5, exact)).toBe(1);
    expect(() => read(`${long}\n`, 5, exact - 1)).toThrow(/line 1: longer than/);
  });
});
