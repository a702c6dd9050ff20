import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { forwardChatCompletion, relayPost, replaceTopLevelString, SseRelay } from './upstream';

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

  it('reads escaped keys, and passes over a key with a malformed escape instead of throwing', () => {
    expect(replaceTopLevelString('{"mod\\u0065l":"base"}', 'model', 'x')).toBe('{"mod\\u0065l":"x"}');
    // An upstream's bad escape (\q) and a raw control character in a key: the answer stays as it was around them.
    expect(replaceTopLevelString('{"\\q":1,"a\tb":2,"model":"base"}', 'model', 'x')).toBe(
      '{"\\q":1,"a\tb":2,"model":"x"}',
    );
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

describe('SseRelay (LF-framed answers, as vLLM writes them)', () => {
  const events = [`data: ${chunk('')}\n\n`, `data: ${chunk('')}\n\n`, `data: ${usageChunk}\n\n`, 'data: [DONE]\n\n'];
  const raw = events.join('');
  const relayAll = (relay: SseRelay, pieces: string[]) => {
    const out: string[] = [];
    const dec = new TextDecoder();
    for (const piece of pieces) {
      const bytes = relay.push(enc.encode(piece));
      if (bytes) out.push(dec.decode(bytes));
    }
    const rest = relay.end();
    if (rest) out.push(dec.decode(rest));
    return out.join('');
  };
  const everySplit = (size: number) => raw.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;

  it('relays every byte as it came when nothing changes, reading the usage split anywhere', () => {
    for (const size of [1, 7, 64, raw.length]) {
      const relay = new SseRelay({ dropUsage: false });
      expect(relayAll(relay, everySplit(size))).toBe(raw);
      expect(relay.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
    }
  });

  it('drops only the usage chunk the client did not ask for, the other events byte for byte', () => {
    for (const size of [1, 5, raw.length]) {
      const relay = new SseRelay({ dropUsage: true });
      expect(relayAll(relay, everySplit(size))).toBe(events[0] + events[1] + events[3]);
      expect(relay.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
    }
  });

  it('renames model in every event, keeping float text and other fields', () => {
    const relay = new SseRelay({ rename: { from: 'base', to: 'me/p/m' }, dropUsage: false });
    const withId = `id: 7\ndata: ${chunk('')}\n\n${raw}`;
    const out = relayAll(relay, [withId.slice(0, 30), withId.slice(30)]);
    expect(out).toBe(withId.replaceAll('"model":"base"', '"model":"me/p/m"'));
    expect(out).toContain('"logprob":-1e-05');
  });

  it('renames event by event where a run has a "model" it cannot replace at once, leaving escaped text alone', () => {
    const spaced = `data: ${chunk('').replace('"model":"base"', '"model" : "base"')}\n\n`;
    const other = `data: ${chunk('').replace('"model":"base"', '"model":"lora-7"')}\n\n`;
    const quoting = `data: ${chunk('').replace('"content":"a"', '"content":"\\"model\\":\\"base\\""')}\n\n`;
    const relay = new SseRelay({ rename: { from: 'base', to: 'me/p/m' }, dropUsage: true });
    const out = relayAll(relay, [events[0] + spaced + other + quoting + events[2] + events[3]]);
    expect(out).toBe(
      events[0].replace('"model":"base"', '"model":"me/p/m"') +
        spaced.replace('"model" : "base"', '"model" : "me/p/m"') +
        other.replace('"model":"lora-7"', '"model":"me/p/m"') +
        quoting.replace('"model":"base"', '"model":"me/p/m"') +
        events[3],
    );
    expect(out).toContain('"content":"\\"model\\":\\"base\\""');
    expect(relay.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
    // A run the single replace does take: the escaped text inside a string is not a key, and stays.
    const fast = new SseRelay({ rename: { from: 'base', to: 'me/p/m' }, dropUsage: true });
    expect(relayAll(fast, [events[0] + quoting])).toBe(
      (events[0] + quoting).replaceAll('"model":"base"', '"model":"me/p/m"'),
    );
  });

  it('sends an unterminated last event, and does not hold back events already complete', () => {
    const relay = new SseRelay({ dropUsage: true });
    expect(new TextDecoder().decode(relay.push(enc.encode(`${events[0]}data: [DO`))!)).toBe(events[0]);
    expect(relay.push(enc.encode('NE]'))).toBeNull();
    expect(new TextDecoder().decode(relay.end()!)).toBe('data: [DONE]');
  });

  it('switches to the SSE parser when a CR appears mid-answer, losing no held-back bytes', () => {
    const relay = new SseRelay({ dropUsage: true });
    const out = relayAll(relay, [`${events[0]}data: ${usageChunk}`, '\r\n\r\ndata: [DONE]\r\n\r\n']);
    expect(out).toBe(`${events[0]}data: [DONE]\n\n`);
    expect(relay.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
  });
});

describe('relayPost', () => {
  it("POSTs on a kept-alive socket and hands back the answer's status, type and bytes as they stream", async () => {
    const sockets = new Set<unknown>();
    const server = http.createServer((req, res) => {
      sockets.add(req.socket);
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ got: JSON.parse(body), auth: req.headers.authorization })}\n\n`);
        setTimeout(() => res.end('data: [DONE]\n\n'), 20);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
    try {
      for (let i = 0; i < 2; i++) {
        const reply = await relayPost(url, '{"n":1}', { authorization: 'Bearer k' }, new AbortController().signal);
        expect(reply.status).toBe(201);
        expect(reply.contentType).toBe('text/event-stream');
        const pieces: string[] = [];
        for await (const piece of reply.body) pieces.push(Buffer.from(piece).toString());
        expect(pieces).toEqual(['data: {"got":{"n":1},"auth":"Bearer k"}\n\n', 'data: [DONE]\n\n']);
      }
      expect(sockets.size).toBe(1);
      const aborted = new AbortController();
      aborted.abort();
      await expect(relayPost(url, '{}', {}, aborted.signal)).rejects.toThrow(/abort/i);
      await expect(relayPost('http://127.0.0.1:1/v1', '{}', {}, new AbortController().signal)).rejects.toThrow();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  /** A stand-in answering `data: <n>` (the request's number on its connection); `onRequest` may hang up instead. */
  async function countingServer(onRequest: (nth: number, req: http.IncomingMessage) => boolean) {
    const seen: { socket: number; nth: number; connection?: string }[] = [];
    const sockets: unknown[] = [];
    const server = http.createServer((req, res) => {
      if (!sockets.includes(req.socket)) sockets.push(req.socket);
      const nth = seen.filter((s) => s.socket === sockets.indexOf(req.socket)).length + 1;
      seen.push({ socket: sockets.indexOf(req.socket), nth, connection: req.headers.connection });
      req.resume();
      req.on('end', () => {
        if (!onRequest(nth, req)) return void req.socket.destroy();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${nth}\n\n`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
    const post = async () => {
      const reply = await relayPost(url, '{}', {}, new AbortController().signal);
      let text = '';
      for await (const piece of reply.body) text += Buffer.from(piece).toString();
      return text;
    };
    const close = () => {
      server.closeAllConnections();
      server.close();
    };
    return { seen, post, close, server };
  }

  it('sends the request once more, on a new connection, when the upstream hangs up a reused socket', async () => {
    // The upstream closing an idle socket just as it is reused (bench:gateway in CI): a reset before any answer.
    const upstream = await countingServer((nth) => nth === 1);
    try {
      expect(await upstream.post()).toBe('data: 1\n\n');
      expect(await upstream.post()).toBe('data: 1\n\n');
      expect(upstream.seen).toEqual([
        { socket: 0, nth: 1, connection: 'keep-alive' },
        { socket: 0, nth: 2, connection: 'keep-alive' },
        { socket: 1, nth: 1, connection: 'close' },
      ]);
    } finally {
      upstream.close();
    }
  });

  it('does not send again what failed on a new socket: the upstream is then down, not idle', async () => {
    const upstream = await countingServer(() => false);
    try {
      await expect(upstream.post()).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(upstream.seen).toHaveLength(1);
    } finally {
      upstream.close();
    }
  });

  it("drops an idle socket before the upstream's announced keep-alive timeout", async () => {
    const upstream = await countingServer(() => true);
    // Announced as `Keep-Alive: timeout=2`: Node's agent keeps the socket for 1 s (the hint less a second).
    upstream.server.keepAliveTimeout = 2_000;
    try {
      await upstream.post();
      await new Promise((r) => setTimeout(r, 1_100));
      await upstream.post();
      expect(upstream.seen.map((s) => s.socket)).toEqual([0, 1]);
      expect(upstream.seen[1].connection).toBe('keep-alive');
    } finally {
      upstream.close();
    }
  });
});
