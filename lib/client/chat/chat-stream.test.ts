import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClientError } from '../api/api-fetch';
import { chatErrorMessage, streamChatCompletion } from './chat-stream';

const chunk = (content: string) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  });

function sseResponse(parts: string[], status = 200): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
      controller.close();
    },
  });
  return new Response(body, { status, headers: { 'content-type': 'text/event-stream' } });
}

afterEach(() => vi.unstubAllGlobals());

describe('streamChatCompletion', () => {
  it('hands over each chunk until [DONE] and sends the body as JSON', async () => {
    const fetchMock = vi.fn(async () =>
      sseResponse([
        `data: ${chunk('Hel')}\n\ndata: ${chunk('lo')}\n`,
        '\ndata: [DONE]\n\n',
        `data: ${chunk('late')}\n\n`,
      ]),
    );
    vi.stubGlobal('fetch', fetchMock);
    const seen: string[] = [];
    await streamChatCompletion(
      { model: 'm', stream: true },
      { onChunk: (c) => seen.push(c.choices[0].delta.content ?? '') },
    );
    expect(seen).toEqual(['Hel', 'lo']);
    expect(fetchMock).toHaveBeenCalledWith(
      '/v1/chat/completions',
      expect.objectContaining({ method: 'POST', body: '{"model":"m","stream":true}' }),
    );
  });

  it('turns an in-band error event into an ApiClientError', async () => {
    vi.stubGlobal('fetch', async () =>
      sseResponse([
        `data: ${chunk('a')}\n\n`,
        'data: {"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}\n\ndata: [DONE]\n\n',
      ]),
    );
    const seen: string[] = [];
    const error = await streamChatCompletion({}, { onChunk: (c) => seen.push(c.id) }).catch((e: unknown) => e);
    expect(seen).toEqual(['c']);
    expect(error).toBeInstanceOf(ApiClientError);
    expect((error as ApiClientError).message).toBe('Internal server error');
  });

  it('reads the OpenAI error envelope of an HTTP error', async () => {
    vi.stubGlobal(
      'fetch',
      async () =>
        new Response(
          JSON.stringify({
            error: { message: 'The model `x` does not exist.', type: 'NotFoundError', param: null, code: 404 },
          }),
          {
            status: 404,
          },
        ),
    );
    const error = (await streamChatCompletion({}, { onChunk: () => {} }).catch((e: unknown) => e)) as ApiClientError;
    expect(error.status).toBe(404);
    expect(error.message).toBe('The model `x` does not exist.');
    expect(chatErrorMessage(502, 'not json')).toMatch(/server had a problem/);
  });

  it('lets an abort through as the AbortError', async () => {
    vi.stubGlobal('fetch', async () => {
      throw new DOMException('aborted', 'AbortError');
    });
    const error = await streamChatCompletion({}, { onChunk: () => {} }).catch((e: unknown) => e);
    expect((error as DOMException).name).toBe('AbortError');
  });
});
