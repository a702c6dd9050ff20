import { describe, expect, it } from 'vitest';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate, normalizeTools, tokenizeConversation } from './chat-template';
import { Tokenizer } from './tokenizer';

const tpl = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
const tok = new Tokenizer();

const weather = {
  type: 'function',
  function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object' } },
};

describe('ChatTemplate', () => {
  it('renders ChatML with a generation prompt', () => {
    const text = tpl.render(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      { addGenerationPrompt: true },
    );
    expect(text).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('joins text parts with newlines and treats developer as system', () => {
    const text = tpl.render([
      { role: 'developer', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ]);
    expect(text).toBe('<|im_start|>system\nrules<|im_end|>\n<|im_start|>user\na\nb<|im_end|>\n');
  });

  it('leaves the final message open with continue_final_message', () => {
    const messages = [
      { role: 'user', content: 'count' },
      { role: 'assistant', content: '1, 2,' },
    ];
    expect(tpl.render(messages, { continueFinalMessage: true })).toBe(
      '<|im_start|>user\ncount<|im_end|>\n<|im_start|>assistant\n1, 2,',
    );
    expect(tpl.render(messages)).toMatch(/1, 2,<\|im_end\|>\n$/);
    expect(() => tpl.render(messages, { continueFinalMessage: true, addGenerationPrompt: true })).toThrow();
  });

  it('lists tools in the system turn and renders hermes tool calls and tool results', () => {
    const text = tpl.render(
      [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city": "Paris"}' } }],
        },
        { role: 'tool', content: 'sunny', tool_call_id: 'c1' },
      ],
      { tools: [weather.function] },
    );
    expect(text).toContain(
      '<|im_start|>system\nsys\n\n# Tools\n<tools>\n{"type": "function", "function": {"name": "weather"',
    );
    expect(text).toContain(
      '<|im_start|>assistant\n<tool_call>{"name": "weather", "arguments": {"city": "Paris"}}</tool_call><|im_end|>\n',
    );
    expect(text).toContain('<|im_start|>tool\nsunny<|im_end|>\n');
  });

  it('normalises tools: wraps bare functions and fills unset keys with null', () => {
    expect(normalizeTools([{ name: 'f' }])).toEqual([
      { type: 'function', function: { name: 'f', description: null, parameters: null } },
    ]);
    expect(normalizeTools([])).toBeNull();
  });

  it('exposes bos/eos and extra variables, and reports referenced variables', () => {
    const t = new ChatTemplate(
      '{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{% if enable_thinking %}T{% endif %}',
      {
        bosToken: '<s>',
      },
    );
    expect(t.render([{ role: 'user', content: 'x' }], { extra: { enable_thinking: true } })).toBe('<s>xT');
    const vars = t.referencedVariables();
    expect([...vars].sort()).toEqual(['bos_token', 'enable_thinking', 'messages']);
    expect(tpl.referencedVariables().has('tools')).toBe(true);
  });
});

describe('tokenizeConversation', () => {
  const messages = [
    { role: 'user', content: 'q1' },
    { role: 'assistant', content: 'a1' },
    { role: 'user', content: 'q2' },
    { role: 'assistant', content: 'a2' },
  ];
  const maskedText = (ids: number[], mask: number[]) => tok.decode(ids.filter((_, i) => mask[i] === 1));

  it('masks exactly the assistant contents and their closing <|im_end|>', () => {
    const { ids, mask } = tokenizeConversation(tok, tpl, messages, { assistantTurns: 'all' });
    expect(tok.decode(ids)).toBe(tpl.render(messages));
    expect(maskedText(ids, mask)).toBe('a1<|im_end|>a2<|im_end|>');
  });

  it('trains only the last assistant turn with assistant_turns "last"', () => {
    const { ids, mask } = tokenizeConversation(tok, tpl, messages, { assistantTurns: 'last' });
    expect(maskedText(ids, mask)).toBe('a2<|im_end|>');
  });

  it('keeps tool calls inside the trained turn', () => {
    const conv = [
      { role: 'user', content: 'Paris?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ type: 'function', function: { name: 'weather', arguments: '{}' } }],
      },
    ];
    const { ids, mask } = tokenizeConversation(tok, tpl, conv, { assistantTurns: 'all', tools: [weather] });
    expect(maskedText(ids, mask)).toBe('<tool_call>{"name": "weather", "arguments": {}}</tool_call><|im_end|>');
  });

  it('uses given turn tokens with their logprobs and leaves the final turn open', () => {
    const imEnd = tok.specialTokenId('<|im_end|>')!;
    const turnTokens = new Map([[1, { ids: [104, 105, imEnd], logprobs: [-0.1, -0.2, -0.3] }]]);
    const conv = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'hi' },
    ];
    const r = tokenizeConversation(tok, tpl, conv, { assistantTurns: 'all', continueFinal: true, turnTokens });
    expect(r.ids.slice(-3)).toEqual([104, 105, imEnd]);
    expect(r.mask.slice(-4)).toEqual([0, 1, 1, 1]);
    expect(r.logprobs.slice(-3)).toEqual([-0.1, -0.2, -0.3]);
    expect(r.logprobs.slice(0, -3).every(Number.isNaN)).toBe(true);
  });
});
