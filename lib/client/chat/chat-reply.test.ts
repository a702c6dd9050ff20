import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '@/lib/schemas/chat';
import { applyChunk, emptyReply, markStopped } from './chat-reply';

const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'm' };
const token = (index: number, text: string, finish: 'stop' | null = null): ChatCompletionChunk => ({
  ...base,
  choices: [
    {
      index,
      delta: { content: text },
      logprobs: {
        content: [
          { token: text, logprob: -0.5, bytes: null, top_logprobs: [{ token: 'x', logprob: -1, bytes: null }] },
        ],
      },
      finish_reason: finish,
    },
  ],
});

describe('applyChunk', () => {
  it('keeps reasoning apart from the content, counting its tokens; older vLLM reasoning_content is read too', () => {
    const think = (delta: ChatCompletionChunk['choices'][number]['delta']): ChatCompletionChunk => ({
      ...token(0, ''),
      choices: [{ ...token(0, '').choices[0], delta }],
    });
    let reply = applyChunk(emptyReply(), token(0, ''));
    expect(reply.choices[0].reasoning).toBeNull();
    reply = applyChunk(reply, think({ reasoning: 'Let me', reasoning_content: 'Let me' }));
    reply = applyChunk(reply, think({ reasoning_content: ' see' }));
    reply = applyChunk(reply, think({}));
    reply = applyChunk(reply, token(0, 'Hi', 'stop'));
    expect(reply.choices[0]).toMatchObject({ reasoning: 'Let me see', reasoningTokens: 2, content: 'Hi' });
    expect(reply.choices[0].tokens).toHaveLength(5);
  });

  it('appends text and tokens per choice and records the finish and usage', () => {
    let reply = emptyReply();
    reply = applyChunk(reply, {
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    });
    reply = applyChunk(reply, token(0, 'Hel'));
    reply = applyChunk(reply, token(1, 'Yo'));
    reply = applyChunk(reply, token(0, 'lo', 'stop'));
    reply = applyChunk(reply, {
      ...base,
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
    });
    expect(reply.choices.map((c) => [c.content, c.tokens.length, c.finishReason])).toEqual([
      ['Hello', 2, 'stop'],
      ['Yo', 1, null],
    ]);
    expect(reply.choices[0].tokens[0]).toEqual({
      token: 'Hel',
      logprob: -0.5,
      bytes: null,
      top: [{ token: 'x', logprob: -1, bytes: null }],
    });
    expect(reply.usage).toEqual({ prompt_tokens: 3, completion_tokens: 3 });
  });

  it('keeps the same object when nothing changed, and marks a stop', () => {
    const reply = applyChunk(emptyReply(), token(0, 'a'));
    expect(applyChunk(reply, { ...base, choices: [] })).toBe(reply);
    expect(markStopped(reply).choices[0].finishReason).toBe('abort');
  });
});
