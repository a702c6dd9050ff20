import { describe, expect, it } from 'vitest';
import { chatCompletionResponseSchema } from '@/lib/schemas/chat';
import {
  ChatCompletionBuilder,
  collectChatCompletion,
  serializeChatCompletion,
  type ResponseContext,
} from './chat-response';
import type { EngineEvent } from './engine-events';
import { fromArray, ids, samplingFor, token } from '@/tests/support/inference';

const CTX: ResponseContext = { created: 1767225600, promptTokenIds: ids(14) };

function build(body: Record<string, unknown>, events: EngineEvent[], ctx: Partial<ResponseContext> = {}) {
  const builder = new ChatCompletionBuilder(samplingFor(body), { ...CTX, ...ctx });
  for (const e of events) builder.push(e);
  const response = builder.build();
  chatCompletionResponseSchema.parse(response);
  return response;
}

describe('non-stream response (docs/contract.md §8.13)', () => {
  it('prints every key, nulls included, in the reference order', async () => {
    const spec = samplingFor(
      { model: 'wandb-artifact:///acme/agents/agent-001:step3', max_tokens: 2 },
      { headerRequestId: '9b1c0e…' },
    );
    const response = await collectChatCompletion(
      fromArray([
        token(0, 9707, 'Hello', -0.31, { topLogprobs: [] }),
        token(0, 1052, ' there', -1.2, { topLogprobs: [], finishReason: 'length' }),
      ]),
      spec,
      CTX,
    );
    const reference = `{"id":"chatcmpl-9b1c0e…","object":"chat.completion","created":1767225600,"model":"wandb-artifact:///acme/agents/agent-001:step3",
 "choices":[{"index":0,
   "message":{"role":"assistant","content":"Hello there","refusal":null,"annotations":null,"audio":null,
              "function_call":null,"tool_calls":[],"reasoning":null,"reasoning_content":null},
   "logprobs":{"content":[{"token":"token_id:9707","logprob":-0.31,"bytes":[72,101,108,108,111],"top_logprobs":[]},
                          {"token":"token_id:1052","logprob":-1.2,"bytes":[32,116,104,101,114,101],"top_logprobs":[]}]},
   "finish_reason":"length","stop_reason":null,"token_ids":null}],
 "service_tier":null,"system_fingerprint":null,
 "usage":{"prompt_tokens":14,"total_tokens":16,"completion_tokens":2,"prompt_tokens_details":null},
 "prompt_logprobs":null,"prompt_token_ids":null,"kv_transfer_params":null}`;
    expect(serializeChatCompletion(response)).toBe(JSON.stringify(JSON.parse(reference)));
  });

  it('prints logprob floats the Python way', () => {
    const response = build({}, [token(0, 1, 'a', 0, { finishReason: 'length' })]);
    expect(serializeChatCompletion(response)).toContain('"logprob":0.0');
  });

  it('EOS: counted and in logprobs / token_ids, not in content', () => {
    const r = build({ return_token_ids: true }, [
      token(0, 5, 'Hi', -1),
      token(0, 2, '<|im_end|>', -0.2, { finishReason: 'stop', stopReason: null }),
    ]);
    expect(r.choices[0]).toMatchObject({
      message: { content: 'Hi' },
      finish_reason: 'stop',
      stop_reason: null,
      token_ids: [5, 2],
    });
    expect(r.choices[0].logprobs?.content).toHaveLength(2);
    expect(r.usage).toEqual({ prompt_tokens: 14, total_tokens: 16, completion_tokens: 2, prompt_tokens_details: null });
    expect(r.prompt_token_ids).toEqual(ids(14));
  });

  it('stop string: text cut at its start, tokens kept; with include_stop_str_in_output cut after it', () => {
    const events = [
      token(0, 1, 'The answer', -1),
      token(0, 2, ' is 4.\n\nQ', -1, { finishReason: 'stop', stopReason: '\n\n' }),
    ];
    expect(build({ stop: ['\n\n'] }, events).choices[0]).toMatchObject({
      message: { content: 'The answer is 4.' },
      stop_reason: '\n\n',
      finish_reason: 'stop',
    });
    expect(build({ stop: ['\n\n'], include_stop_str_in_output: true }, events).choices[0].message.content).toBe(
      'The answer is 4.\n\n',
    );
  });

  it('a stop string spanning tokens is cut where it starts, as when streamed (hardening item 5)', () => {
    // Tokens n, u, t, t: "tt" starts in the third token. The non-stream text used to keep "nut".
    const events = (stop: string) => [
      token(0, 110, 'n', -1),
      token(0, 117, 'u', -1),
      token(0, 116, 't', -1),
      token(0, 116, 't', -1, { finishReason: 'stop', stopReason: stop }),
    ];
    expect(build({ stop: ['tt'] }, events('tt')).choices[0].message.content).toBe('nu');
    expect(build({ stop: ['utt'] }, events('utt')).choices[0].message.content).toBe('n');
    expect(build({ stop: ['tt'], include_stop_str_in_output: true }, events('tt')).choices[0].message.content).toBe(
      'nutt',
    );
  });

  it('n choices in index order; usage sums them', () => {
    const r = build({ n: 2 }, [
      token(1, 3, 'b', -1, { finishReason: 'length' }),
      token(0, 1, 'a', -1),
      token(0, 2, 'a', -1, { finishReason: 'length' }),
    ]);
    expect(r.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'aa'],
      [1, 'b'],
    ]);
    expect(r.usage.completion_tokens).toBe(3);
  });

  it('parses tool calls when tools are given without tool_choice (docs/contract.md §8.12)', () => {
    let n = 0;
    const r = build(
      { tools: [{ type: 'function', function: { name: 'lookup' } }] },
      [
        token(0, 1, '<tool_call>\n{"name": "lookup", "arguments": {"q": "x"}}\n</tool_call>', -1),
        token(0, 2, '', -1, { finishReason: 'stop', stopReason: null }),
      ],
      { newToolCallId: () => `chatcmpl-tool-${++n}` },
    );
    expect(r.choices[0]).toMatchObject({
      message: {
        content: null,
        tool_calls: [
          { id: 'chatcmpl-tool-1', type: 'function', function: { name: 'lookup', arguments: '{"q": "x"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    });
    // logprobs still cover every generated token, markup included.
    expect(r.choices[0].logprobs?.content).toHaveLength(2);
  });

  it('leaves tool-call markup as content with tool_choice none', () => {
    const text = '<tool_call>{"name":"f","arguments":{}}</tool_call>';
    const r = build({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' }, [
      token(0, 1, text, -1, { finishReason: 'length' }),
    ]);
    expect(r.choices[0]).toMatchObject({ message: { content: text, tool_calls: [] }, finish_reason: 'length' });
  });

  it('echo prepends the last message content when its role is the response role (docs/contract.md §8.7)', () => {
    const messages = [
      { role: 'user', content: 'Continue' },
      { role: 'assistant', content: 'Once upon' },
    ];
    const r = build({ messages, echo: true, add_generation_prompt: false }, [
      token(0, 1, ' a time', -1, { finishReason: 'length' }),
    ]);
    expect(r.choices[0].message).toMatchObject({ role: 'assistant', content: 'Once upon a time' });
    const user = build({ echo: true, add_generation_prompt: false }, [
      token(0, 1, '!', -1, { finishReason: 'length' }),
    ]);
    expect(user.choices[0].message).toMatchObject({ role: 'user', content: 'Say hello!' });
  });

  it('prompt_logprobs when asked for and supplied', () => {
    const promptLogprobs = [
      null,
      {
        token: { tokenId: 2, tokenText: 'b', logprob: -1, rank: 4 },
        ranked: [{ tokenId: 9, tokenText: 'z', logprob: -0.1, rank: 1 }],
      },
    ];
    const r = build({ prompt_logprobs: 1 }, [token(0, 1, 'x', -1, { finishReason: 'length' })], { promptLogprobs });
    expect(r.prompt_logprobs).toEqual([
      null,
      { '2': { logprob: -1, rank: 4, decoded_token: 'b' }, '9': { logprob: -0.1, rank: 1, decoded_token: 'z' } },
    ]);
    expect(
      build({}, [token(0, 1, 'x', -1, { finishReason: 'length' })], { promptLogprobs }).prompt_logprobs,
    ).toBeNull();
  });

  it('refuses to build when a choice never finished', () => {
    const builder = new ChatCompletionBuilder(samplingFor({}), CTX);
    builder.push(token(0, 1, 'a', -1));
    expect(() => builder.build()).toThrow();
  });
});
