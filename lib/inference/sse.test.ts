import { describe, expect, it, vi } from 'vitest';
import type { EngineEvent } from './engine-events';
import { ChatStreamEncoder, chatCompletionStream, SSE_DONE, type StreamContext } from './sse';
import { fromArray, ids, samplingFor, token } from '@/tests/support/inference';

const CTX: StreamContext = { created: 1767225600, promptTokenIds: ids(12) };

async function readFrames(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const frames: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return frames;
    frames.push(decoder.decode(value));
  }
}

async function run(body: Record<string, unknown>, events: EngineEvent[], ctx: Partial<StreamContext> = {}) {
  const spec = samplingFor({ stream: true, ...body });
  return readFrames(chatCompletionStream(fromArray(events), spec, { ...CTX, ...ctx }));
}

/** Parsed JSON of every data event but [DONE]. */
const payloads = (frames: string[]) =>
  frames.filter((f) => f !== SSE_DONE).map((f) => JSON.parse(f.slice('data: '.length)) as Record<string, unknown>);
const choiceOf = (p: Record<string, unknown>) => (p.choices as Record<string, unknown>[])[0];

describe('SSE framing (docs/contract.md §8.14)', () => {
  it('is byte-exact against the reference example', async () => {
    const frames = await run({ max_tokens: 2, stream_options: { include_usage: true } }, [
      token(0, 9707, 'Hello', -0.31, { topLogprobs: [] }),
      token(0, 1052, ' there', -1.2, { topLogprobs: [], finishReason: 'length' }),
    ]);
    const expected =
      'data: {"id":"chatcmpl-5e0f…","object":"chat.completion.chunk","created":1767225600,"model":"wandb-artifact:///acme/agents/agent-001","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}\n' +
      '\n' +
      'data: {"id":"chatcmpl-5e0f…","object":"chat.completion.chunk","created":1767225600,"model":"wandb-artifact:///acme/agents/agent-001","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"token_id:9707","logprob":-0.31,"bytes":[72,101,108,108,111],"top_logprobs":[]}]},"finish_reason":null,"token_ids":null}]}\n' +
      '\n' +
      'data: {"id":"chatcmpl-5e0f…","object":"chat.completion.chunk","created":1767225600,"model":"wandb-artifact:///acme/agents/agent-001","choices":[{"index":0,"delta":{"content":" there"},"logprobs":{"content":[{"token":"token_id:1052","logprob":-1.2,"bytes":[32,116,104,101,114,101],"top_logprobs":[]}]},"finish_reason":"length","stop_reason":null,"token_ids":null}]}\n' +
      '\n' +
      'data: {"id":"chatcmpl-5e0f…","object":"chat.completion.chunk","created":1767225600,"model":"wandb-artifact:///acme/agents/agent-001","choices":[],"usage":{"prompt_tokens":12,"total_tokens":14,"completion_tokens":2}}\n' +
      '\n' +
      'data: [DONE]\n' +
      '\n';
    expect(frames.join('')).toBe(expected);
    // One enqueue per event, so each is flushed as soon as it exists.
    expect(frames).toHaveLength(5);
    expect(frames.every((f) => f.startsWith('data: ') && f.endsWith('\n\n') && !f.includes('\r'))).toBe(true);
  });

  it('writes non-ASCII as raw UTF-8 and logprob floats the Python way', async () => {
    const frames = await run({}, [token(0, 7, 'é😀', 0, { finishReason: 'length' })]);
    expect(frames[1]).toContain('"delta":{"content":"é😀"}');
    expect(frames[1]).toContain('"logprob":0.0');
  });

  it('without include_usage there is no usage chunk and no usage key anywhere', async () => {
    const frames = await run({}, [token(0, 1, 'a', -1), token(0, 2, 'b', -1, { finishReason: 'length' })]);
    expect(frames.at(-1)).toBe(SSE_DONE);
    expect(payloads(frames).every((p) => !('usage' in p))).toBe(true);
    expect(frames).toHaveLength(4);
  });
});

describe('chunk contents and key presence', () => {
  it('role chunk: index, delta, logprobs:null, finish_reason:null, and prompt_token_ids only there', async () => {
    const frames = await run({ return_token_ids: true }, [
      token(0, 5, 'x', -1, { finishReason: 'stop', stopReason: null }),
    ]);
    const [role, last] = payloads(frames);
    expect(Object.keys(role)).toEqual(['id', 'object', 'created', 'model', 'choices', 'prompt_token_ids']);
    expect(role.prompt_token_ids).toEqual(ids(12));
    expect(Object.keys(choiceOf(role))).toEqual(['index', 'delta', 'logprobs', 'finish_reason']);
    expect(Object.keys(last)).toEqual(['id', 'object', 'created', 'model', 'choices']);
    expect(Object.keys(choiceOf(last))).toEqual([
      'index',
      'delta',
      'logprobs',
      'finish_reason',
      'stop_reason',
      'token_ids',
    ]);
    expect(choiceOf(last).token_ids).toEqual([5]);
  });

  it('content chunks carry token_ids but no stop_reason', async () => {
    const frames = await run({}, [token(0, 1, 'a', -1), token(0, 2, 'b', -1, { finishReason: 'length' })]);
    expect(Object.keys(choiceOf(payloads(frames)[1]))).toEqual([
      'index',
      'delta',
      'logprobs',
      'finish_reason',
      'token_ids',
    ]);
  });

  it('the final chunk after EOS has an empty content delta (no tool parser); the EOS token still counts and has logprobs', async () => {
    const frames = await run({ stream_options: { include_usage: true } }, [
      token(0, 1, 'Hi', -0.5),
      token(0, 2, '<|im_end|>', -0.1, { finishReason: 'stop', stopReason: null }),
    ]);
    const p = payloads(frames);
    expect(choiceOf(p[2])).toEqual({
      index: 0,
      delta: { content: '' },
      logprobs: {
        content: [{ token: 'token_id:2', logprob: -0.1, bytes: [...Buffer.from('<|im_end|>')], top_logprobs: [] }],
      },
      finish_reason: 'stop',
      stop_reason: null,
      token_ids: null,
    });
    expect(p[3].usage).toEqual({ prompt_tokens: 12, total_tokens: 14, completion_tokens: 2 });
  });

  it('a stop token id reports the numeric stop_reason; include_stop_str_in_output keeps its text', async () => {
    const stopped = await run({ stop_token_ids: [42] }, [
      token(0, 42, '\n', -1, { finishReason: 'stop', stopReason: 42 }),
    ]);
    expect(choiceOf(payloads(stopped)[1])).toMatchObject({
      delta: { content: '' },
      finish_reason: 'stop',
      stop_reason: 42,
    });
    const kept = await run({ stop_token_ids: [42], include_stop_str_in_output: true }, [
      token(0, 42, '\n', -1, { finishReason: 'stop', stopReason: 42 }),
    ]);
    expect(choiceOf(payloads(kept)[1])).toMatchObject({ delta: { content: '\n' }, stop_reason: 42 });
  });

  it('a finish event without a token: empty delta, empty logprobs, token_ids [] with return_token_ids', async () => {
    const frames = await run({ return_token_ids: true }, [
      token(0, 1, 'a', -1),
      { type: 'finish', choice: 0, finishReason: 'abort' },
    ]);
    expect(choiceOf(payloads(frames)[2])).toEqual({
      index: 0,
      delta: { content: '' },
      logprobs: { content: [] },
      finish_reason: 'abort',
      stop_reason: null,
      token_ids: [],
    });
  });

  it('top_logprobs entries follow the request', async () => {
    const frames = await run({ logprobs: true, top_logprobs: 2, return_tokens_as_token_ids: false }, [
      token(0, 1, 'A', -0.2, {
        topLogprobs: [
          { tokenId: 1, tokenText: 'A', logprob: -0.2 },
          { tokenId: 2, tokenText: 'B', logprob: -1.9 },
          { tokenId: 3, tokenText: 'C', logprob: -3 },
        ],
        finishReason: 'length',
      }),
    ]);
    expect(choiceOf(payloads(frames)[1]).logprobs).toEqual({
      content: [
        {
          token: 'A',
          logprob: -0.2,
          bytes: [65],
          top_logprobs: [
            { token: 'A', logprob: -0.2, bytes: [65] },
            { token: 'B', logprob: -1.9, bytes: [66] },
          ],
        },
      ],
    });
  });
});

describe('n > 1, echo, continuous usage', () => {
  it('sends every role chunk first, then one choice per chunk as events interleave; usage sums all choices', async () => {
    const frames = await run({ n: 2, stream_options: { include_usage: true } }, [
      token(1, 10, 'b1', -1),
      token(0, 20, 'a1', -1),
      token(0, 21, 'a2', -1, { finishReason: 'length' }),
      token(1, 11, 'b2', -1),
      token(1, 12, 'b3', -1, { finishReason: 'stop', stopReason: null }),
    ]);
    const p = payloads(frames);
    expect(p.map((c) => (c.choices as { index: number }[]).map((ch) => ch.index))).toEqual([
      [0],
      [1],
      [1],
      [0],
      [0],
      [1],
      [1],
      [],
    ]);
    expect(p.at(-1)?.usage).toEqual({ prompt_tokens: 12, total_tokens: 17, completion_tokens: 5 });
  });

  it('ignores events of a choice that already finished', async () => {
    const frames = await run({}, [token(0, 1, 'a', -1, { finishReason: 'length' }), token(0, 2, 'b', -1)]);
    expect(frames).toHaveLength(3);
  });

  it('echo sends the last message content right after the role chunk (docs/contract.md §8.7)', async () => {
    const frames = await run(
      {
        messages: [
          { role: 'user', content: 'Complete:' },
          { role: 'assistant', content: 'Once upon' },
        ],
        echo: true,
        add_generation_prompt: false,
      },
      [token(0, 1, ' a time', -1, { finishReason: 'length' })],
    );
    const p = payloads(frames);
    expect(choiceOf(p[0]).delta).toEqual({ role: 'assistant', content: '' });
    expect(Object.keys(p[1])).toEqual(['id', 'object', 'created', 'model', 'choices']);
    expect(choiceOf(p[1])).toEqual({ index: 0, delta: { content: 'Once upon' }, logprobs: null, finish_reason: null });
    expect(choiceOf(p[2]).delta).toEqual({ content: ' a time' });
  });

  it('the role is the last message role when add_generation_prompt is off', async () => {
    const frames = await run({ add_generation_prompt: false }, [token(0, 1, 'x', -1, { finishReason: 'length' })]);
    expect(choiceOf(payloads(frames)[0]).delta).toEqual({ role: 'user', content: '' });
  });

  it('continuous_usage_stats puts per-choice counts on every chunk', async () => {
    const frames = await run(
      { n: 2, temperature: 1, stream_options: { continuous_usage_stats: true }, return_token_ids: true },
      [
        token(0, 1, 'a', -1),
        token(1, 2, 'b', -1),
        token(0, 3, 'c', -1, { finishReason: 'length' }),
        token(1, 4, 'd', -1, { finishReason: 'length' }),
      ],
    );
    const p = payloads(frames);
    expect(Object.keys(p[0])).toEqual(['id', 'object', 'created', 'model', 'choices', 'usage', 'prompt_token_ids']);
    expect(p.map((c) => (c.usage as { completion_tokens: number }).completion_tokens)).toEqual([0, 0, 1, 1, 2, 2, 4]);
    expect(p[2].usage).toEqual({ prompt_tokens: 12, total_tokens: 13, completion_tokens: 1 });
  });
});

describe('stop strings in streams (docs/contract.md §8.5)', () => {
  it('holds back max(len(stop)) − 1 characters and cuts at the stop string', async () => {
    const frames = await run({ stop: ['END'] }, [
      token(0, 1, 'Hel', -1),
      token(0, 2, 'lo E', -1),
      token(0, 3, 'ND and more', -1, { finishReason: 'stop', stopReason: 'END' }),
    ]);
    const p = payloads(frames);
    expect(p.slice(1).map((c) => choiceOf(c).delta)).toEqual([{ content: 'H' }, { content: 'ello' }, { content: ' ' }]);
    expect(choiceOf(p[3])).toMatchObject({ finish_reason: 'stop', stop_reason: 'END' });
  });

  it('releases the held-back tail at a length finish', async () => {
    const frames = await run({ stop: ['STOP'] }, [
      token(0, 1, 'abcdef', -1),
      token(0, 2, 'gh', -1, { finishReason: 'length' }),
    ]);
    expect(
      payloads(frames)
        .slice(1)
        .map((c) => choiceOf(c).delta),
    ).toEqual([{ content: 'abc' }, { content: 'defgh' }]);
  });

  it('a chunk whose text is all held back still carries its token, with an empty content delta', async () => {
    const frames = await run({ stop: ['XYZ'] }, [
      token(0, 1, 'a', -1),
      token(0, 2, 'b', -1, { finishReason: 'length' }),
    ]);
    const p = payloads(frames);
    expect(choiceOf(p[1]).delta).toEqual({ content: '' });
    expect((choiceOf(p[1]).logprobs as { content: unknown[] }).content).toHaveLength(1);
    expect(choiceOf(p[2]).delta).toEqual({ content: 'ab' });
  });

  it('include_stop_str_in_output: no holdback, text up to the end of the stop string', async () => {
    const frames = await run({ stop: ['END'], include_stop_str_in_output: true }, [
      token(0, 1, 'Hel', -1),
      token(0, 2, 'lo END!', -1, { finishReason: 'stop', stopReason: 'END' }),
    ]);
    expect(
      payloads(frames)
        .slice(1)
        .map((c) => choiceOf(c).delta),
    ).toEqual([{ content: 'Hel' }, { content: 'lo END' }]);
  });
});

describe('streamed tool calls ([DEC] docs/contract.md §8.14)', () => {
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
  let n = 0;
  const newToolCallId = () => `chatcmpl-tool-${String(++n).padStart(32, '0')}`;

  it('emits each call whole once its block closes and finishes with tool_calls', async () => {
    n = 0;
    const frames = await run(
      { tools },
      [
        token(0, 1, 'Checking. ', -1),
        token(0, 2, '<tool_call>{"name": "get_weather", ', -1),
        token(0, 3, '"arguments": {"city": "Paris"}}</tool_call>', -1),
        token(0, 4, '', -1, { finishReason: 'stop', stopReason: null }),
      ],
      { newToolCallId },
    );
    const p = payloads(frames);
    expect(p.slice(1).map((c) => choiceOf(c).delta)).toEqual([
      { content: 'Checking. ' },
      {},
      {
        tool_calls: [
          {
            index: 0,
            id: 'chatcmpl-tool-00000000000000000000000000000001',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
          },
        ],
      },
      {},
    ]);
    expect(choiceOf(p[4])).toMatchObject({ finish_reason: 'tool_calls', stop_reason: null });
  });

  it('tool_choice none streams the markup as content', async () => {
    const frames = await run({ tools, tool_choice: 'none' }, [
      token(0, 1, '<tool_call>{"name":"f","arguments":{}}</tool_call>', -1, { finishReason: 'length' }),
    ]);
    expect(choiceOf(payloads(frames)[1])).toMatchObject({
      delta: { content: '<tool_call>{"name":"f","arguments":{}}</tool_call>' },
      finish_reason: 'length',
    });
  });
});

describe('errors and cancellation (docs/contract.md §8.15)', () => {
  it('a failure after the stream started sends the generic error event, then [DONE]', async () => {
    const onError = vi.fn();
    async function* failing(): AsyncGenerator<EngineEvent> {
      yield token(0, 1, 'a', -1);
      throw new Error('worker crashed: secret detail');
    }
    const frames = await readFrames(chatCompletionStream(failing(), samplingFor({ stream: true }), CTX, { onError }));
    expect(frames.slice(-2)).toEqual([
      'data: {"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}\n\n',
      SSE_DONE,
    ]);
    expect(frames.join('')).not.toContain('secret');
    expect(onError).toHaveBeenCalledOnce();
  });

  it('events that end before every choice finished are a failure too', async () => {
    const frames = await run({}, [token(0, 1, 'a', -1)]);
    expect(frames.at(-2)).toContain('"type":"InternalServerError"');
  });

  it('cancelling the body returns the event iterator so the engine can stop', async () => {
    let returned = false;
    const events: AsyncIterable<EngineEvent> = {
      [Symbol.asyncIterator]() {
        return {
          next: async () => ({ done: false, value: token(0, 1, 'a', -1) }),
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    };
    const reader = chatCompletionStream(events, samplingFor({ stream: true }), CTX).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(returned).toBe(true);
  });

  it('a client gone while the engine is still working is not a server error', async () => {
    const onError = vi.fn();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let pulls = 0;
    const events: AsyncIterable<EngineEvent> = {
      [Symbol.asyncIterator]() {
        return {
          // The second token arrives only after the client has gone (an engine still computing it).
          next: async () => {
            if (++pulls === 2) await held;
            return { done: false, value: token(0, 1, 'a', -1) };
          },
          return: async () => ({ done: true, value: undefined }),
        };
      },
    };
    const stream = chatCompletionStream(events, samplingFor({ stream: true }), CTX, { onError });
    const reader = stream.getReader();
    await reader.read(); // the role chunk
    await reader.read(); // the first token
    const pending = reader.read(); // a pull now waits on the engine
    await new Promise((r) => setTimeout(r, 0));
    await reader.cancel();
    release();
    await pending.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 10));
    // Before: the late token was enqueued on the closed stream ("Controller is already closed"), logged as a failure.
    expect(onError).not.toHaveBeenCalled();
  });

  it('the encoder alone is pure: start, push, end', () => {
    const enc = new ChatStreamEncoder(samplingFor({ stream: true }), CTX);
    expect(enc.start()).toHaveLength(1);
    expect(enc.push(token(0, 1, 'a', -1, { finishReason: 'length' }))).toHaveLength(1);
    expect(enc.end()).toEqual([SSE_DONE]);
    expect(() => enc.push(token(3, 1, 'a', -1))).toThrow();
  });
});
