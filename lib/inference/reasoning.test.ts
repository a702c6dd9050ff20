import { describe, expect, it } from 'vitest';
import { fromArray, ids, samplingFor, token } from '@/tests/support/inference';
import { ChatCompletionBuilder } from './chat-response';
import type { EngineEvent } from './engine-events';
import { promptEndsReasoning, ReasoningSplitter, splitReasoning, startsInReasoning } from './reasoning';
import { chatCompletionStream, SSE_DONE } from './sse';

const ON = { startsInReasoning: true, include: true };
const OFF = { startsInReasoning: false, include: true };

describe('the whole-answer split (vLLM extract_reasoning)', () => {
  it("splits a Qwen3 checkpoint's empty think block off its answer, keeping vLLM's newlines", () => {
    expect(splitReasoning('<think>\n\n</think>\n\nHello', ON)).toEqual({ reasoning: '\n\n', content: '\n\nHello' });
    expect(splitReasoning('<think>\nLet me see.\n</think>\n\n42', ON)).toEqual({
      reasoning: '\nLet me see.\n',
      content: '\n\n42',
    });
  });

  it('treats a think block opened by the prompt (no <think> in the answer) the same way', () => {
    expect(splitReasoning('pondering</think>answer', ON)).toEqual({ reasoning: 'pondering', content: 'answer' });
  });

  it('reports an unclosed think block as all reasoning, content null', () => {
    expect(splitReasoning('<think>still thinking', ON)).toEqual({ reasoning: 'still thinking', content: null });
    expect(splitReasoning('no tags at all', ON)).toEqual({ reasoning: 'no tags at all', content: null });
  });

  it('gives null content when nothing follows </think>, and empty reasoning when the block is empty', () => {
    expect(splitReasoning('<think>x</think>', ON)).toEqual({ reasoning: 'x', content: null });
    expect(splitReasoning('<think></think>hi', ON)).toEqual({ reasoning: '', content: 'hi' });
  });

  it('leaves later tags in the content', () => {
    expect(splitReasoning('<think>a</think>b<think>c</think>d', ON)).toEqual({
      reasoning: 'a',
      content: 'b<think>c</think>d',
    });
  });

  it('is all content when the prompt ended reasoning, tags included', () => {
    expect(splitReasoning('<think>a</think>b', OFF)).toEqual({ reasoning: null, content: '<think>a</think>b' });
  });

  it('include_reasoning: false drops the reasoning but not the content', () => {
    expect(splitReasoning('<think>a</think>b', { ...ON, include: false })).toEqual({ reasoning: null, content: 'b' });
  });
});

describe('where an answer starts', () => {
  const START = 151667;
  const END = 151668;
  it("follows the prompt's last think tag (vLLM prompt_is_reasoning_end)", () => {
    // Qwen3 with enable_thinking: false renders "<think>\n\n</think>\n\n" into the generation prompt.
    expect(promptEndsReasoning([1, 2, START, 3, END, 4], START, END)).toBe(true);
    expect(promptEndsReasoning([1, START, 3], START, END)).toBe(false);
    expect(promptEndsReasoning([1, END, 2, START, 3], START, END)).toBe(false);
    expect(promptEndsReasoning([1, 2, 3], START, END)).toBe(false);
  });

  it('qwen3 honours enable_thinking: false; deepseek_r1 ignores it', () => {
    expect(startsInReasoning('qwen3', false, { enable_thinking: false })).toBe(false);
    expect(startsInReasoning('qwen3', false, { enable_thinking: true })).toBe(true);
    expect(startsInReasoning('qwen3', false, null)).toBe(true);
    expect(startsInReasoning('deepseek_r1', false, { enable_thinking: false })).toBe(true);
    expect(startsInReasoning('deepseek_r1', true, {})).toBe(false);
  });
});

describe('the streamed split', () => {
  /** Feeds the pieces one by one, collecting what each push releases. */
  function stream(pieces: string[], startsIn = true) {
    const s = new ReasoningSplitter(startsIn);
    const out = pieces.map((p) => s.push(p));
    out.push(s.finish());
    return out;
  }

  it('never sends a tag, even split across tokens', () => {
    const out = stream(['<th', 'ink>', '\nOK', '</', 'thi', 'nk>', '\n\nHi']);
    expect(out.map((d) => d.reasoning).join('')).toBe('\nOK');
    expect(out.map((d) => d.content).join('')).toBe('\n\nHi');
    for (const d of out) expect(d.reasoning + d.content).not.toMatch(/<|>/);
  });

  it('releases a held "<" that did not become a tag', () => {
    const out = stream(['a <', 'b']);
    expect(out.map((d) => d.reasoning)).toEqual(['a ', '<b', '']);
  });

  it('ends with exactly the whole-answer split, however the text is cut', () => {
    const texts = ['<think>\n\n</think>\n\nHello', 'x<think>y</think>z</think>', 'a</thinkb</think>c', '<think>open'];
    for (const text of texts) {
      const whole = splitReasoning(text, ON);
      for (let cut = 0; cut <= text.length; cut++) {
        const out = stream([text.slice(0, cut), text.slice(cut)]);
        const reasoning = out.map((d) => d.reasoning).join('');
        const content = out.map((d) => d.content).join('');
        expect(reasoning, `${text} cut at ${cut}`).toBe(whole.reasoning);
        expect(content === '' ? null : content, `${text} cut at ${cut}`).toBe(whole.content);
      }
    }
  });
});

// Qwen3's ids for <think> and </think>; the text is what matters to the builders.
const THINK: EngineEvent[] = [
  token(0, 151667, '<think>', -0.1),
  token(0, 198, '\n', -0.2),
  token(0, 32313, 'Hmm', -0.3),
  token(0, 151668, '</think>', -0.4),
  token(0, 271, '\n\n', -0.5),
  token(0, 9707, 'Hello', -0.6, { finishReason: 'length' }),
];

describe('responses with a reasoning parser', () => {
  it('non-stream: reasoning and reasoning_content hold the think text, content the rest; logprobs and usage keep every token', () => {
    const builder = new ChatCompletionBuilder(samplingFor({}), {
      created: 1,
      promptTokenIds: ids(5),
      reasoning: ON,
    });
    for (const e of THINK) builder.push(e);
    const r = builder.build();
    const m = r.choices[0].message;
    expect(m.reasoning).toBe('\nHmm');
    expect(m.reasoning_content).toBe('\nHmm');
    expect(m.content).toBe('\n\nHello');
    expect(r.choices[0].logprobs!.content!.map((e) => e.token)).toHaveLength(6);
    expect(r.usage.completion_tokens).toBe(6);
    expect(r.choices[0].finish_reason).toBe('length');
  });

  it('non-stream: tool calls are parsed from the content only', () => {
    const builder = new ChatCompletionBuilder(
      samplingFor({ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }),
      { created: 1, promptTokenIds: ids(5), reasoning: ON, newToolCallId: () => 'chatcmpl-tool-1' },
    );
    const text =
      '<think><tool_call>{"name": "g", "arguments": {}}</tool_call></think><tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>';
    builder.push(token(0, 1, text, -1, { finishReason: 'length' }));
    const c = builder.build().choices[0];
    expect(c.message.reasoning).toBe('<tool_call>{"name": "g", "arguments": {}}</tool_call>');
    expect(c.message.content).toBeNull();
    expect(c.message.tool_calls.map((t) => t.function)).toEqual([{ name: 'f', arguments: '{"a": 1}' }]);
    expect(c.finish_reason).toBe('tool_calls');
  });

  it('stream: deltas carry reasoning inside the block and content after it; the tags are {} deltas with their logprobs', async () => {
    const body = chatCompletionStream(fromArray(THINK), samplingFor({ stream: true }), {
      created: 1,
      promptTokenIds: ids(5),
      reasoning: ON,
    });
    const text = await new Response(body).text();
    const chunks = text
      .split('\n\n')
      .filter((f) => f.startsWith('data: ') && f !== SSE_DONE.trim())
      .map((f) => JSON.parse(f.slice(6)) as { choices: { delta: Record<string, string>; logprobs: unknown }[] });
    const deltas = chunks.map((c) => c.choices[0].delta);
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      {},
      { reasoning: '\n', reasoning_content: '\n' },
      { reasoning: 'Hmm', reasoning_content: 'Hmm' },
      {},
      { content: '\n\n' },
      { content: 'Hello' },
    ]);
    // Every generated token's logprob is still sent, the tags' included.
    expect(chunks.slice(1).every((c) => (c.choices[0].logprobs as { content: unknown[] }).content.length === 1)).toBe(
      true,
    );
    expect(text.endsWith(SSE_DONE)).toBe(true);
  });

  it('stream: a stop string is cut before the split, and include_reasoning: false sends no reasoning', async () => {
    const body = chatCompletionStream(
      // The engine reports the stop string on the token that completed it; the builders cut the text there.
      fromArray([...THINK.slice(0, -1), token(0, 9707, 'Hello', -0.6, { finishReason: 'stop', stopReason: 'Hel' })]),
      samplingFor({ stream: true, stop: ['Hel'], include_reasoning: false }),
      { created: 1, promptTokenIds: ids(5), reasoning: { startsInReasoning: true, include: false } },
    );
    const text = await new Response(body).text();
    expect(text).not.toContain('reasoning');
    const content = [...text.matchAll(/"content":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('');
    expect(content).toBe('\n\n');
  });
});
