import { describe, expect, it } from 'vitest';
import { forwardChatCompletion, replaceTopLevelString } from './upstream';

const enc = new TextEncoder();

function sseServer(chunks: string[], contentType = 'text/event-stream'): typeof fetch {
  return (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const chunk of chunks) c.enqueue(enc.encode(chunk));
          c.close();
        },
      }),
      { headers: { 'content-type': contentType } },
    )) as typeof fetch;
}

async function readAll(body: string | ReadableStream<Uint8Array>): Promise<string> {
  return typeof body === 'string' ? body : new Response(body).text();
}

const chunk = (extra: string) =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"base","choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"token_id:9","logprob":-1e-05,"bytes":null,"top_logprobs":[]}]},"finish_reason":null}]${extra}}`;
const usageChunk =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"base","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}';

describe('replaceTopLevelString', () => {
  it('changes only the top-level value, whitespace and nesting as written', () => {
    const text = '{"id":"x","nested":{"model":"keep"},"model" : "base","n":-0.0}';
    expect(replaceTopLevelString(text, 'model', 'me/p/m:step1')).toBe(
      '{"id":"x","nested":{"model":"keep"},"model" : "me/p/m:step1","n":-0.0}',
    );
    expect(replaceTopLevelString('{"a":"\\"model\\":1"}', 'model', 'x')).toBe('{"a":"\\"model\\":1"}');
  });
});

describe('forwardChatCompletion', () => {
  const call = (fetchImpl: typeof fetch, body: Record<string, unknown>, modelAsSent = 'me/p/m') =>
    forwardChatCompletion({
      server: { baseUrl: 'http://vllm.test/v1', fetch: fetchImpl },
      body: { messages: [], ...body },
      upstreamModel: 'base',
      modelAsSent,
      signal: new AbortController().signal,
    });

  it('reads CRLF-framed events split anywhere, keeps float text, renames model, drops unasked usage', async () => {
    const raw = `data: ${chunk('')}\r\n\r\ndata: ${usageChunk}\r\n\r\ndata: [DONE]\r\n\r\n`;
    // Split into 7-byte pieces so that events and even the CRLF pairs straddle reads.
    const pieces = raw.match(/[\s\S]{1,7}/g)!;
    const result = await call(sseServer(pieces), { stream: true });
    const text = await readAll(result.body);
    expect(text).toBe(`data: ${chunk('').replace('"model":"base"', '"model":"me/p/m"')}\n\ndata: [DONE]\n\n`);
    expect(text).toContain('"logprob":-1e-05');
    expect(await result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
  });

  it('relays the bytes unchanged when nothing needs rewriting, still reading usage', async () => {
    const raw = `data: ${chunk('')}\r\n\r\ndata: ${usageChunk}\r\n\r\ndata: [DONE]\r\n\r\n`;
    const result = await call(
      sseServer([raw.slice(0, 50), raw.slice(50)]),
      {
        stream: true,
        stream_options: { include_usage: true },
      },
      'base',
    );
    expect(await readAll(result.body)).toBe(raw);
    expect(await result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
  });

  it('splices model into a JSON answer without re-serializing it', async () => {
    const json =
      '{"id":"c","object":"chat.completion","created":1,"model":"base","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7},"x":1.0}';
    const result = await call(sseServer([json], 'application/json'), {});
    expect(await readAll(result.body)).toBe(json.replace('"model":"base"', '"model":"me/p/m"'));
    expect(await result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 5 });
  });
});
