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
